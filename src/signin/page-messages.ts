import { IntlMessageFormat } from 'intl-messageformat';
import type { PageLocale } from './page-locale.js';

/**
 * The English catalogue of the hosted pages, in ICU MessageFormat. Every other language has
 * exactly these keys (the type below holds them to it), so a page never shows a key.
 */
const english = {
  'page.skipToContent': 'Skip to the form',
  'field.email': 'Email',
  'field.password': 'Password',
  'field.newPassword': 'New password',
  'field.name': 'Name',
  'field.code': 'Code',
  'field.recoveryCode': 'Recovery code',
  'signIn.title': 'Sign in to {brand}',
  'signIn.continue': 'Continue',
  'signIn.withPassword': 'Sign in',
  'signIn.sendCode': 'Email me a code',
  'signIn.withCode': 'Sign in with the code',
  'signIn.withPasskey': 'Sign in with a passkey',
  'signIn.passkeyFailed': 'The passkey could not sign you in. Try again, or sign in another way.',
  'signIn.codeSent': 'If {email} can sign in here, a code is on its way to it. It is good for {minutes, plural, one {# minute} other {# minutes}}.',
  'signIn.failed': 'The email, password or code is not right.',
  'signIn.forgotPassword': 'Forgotten your password?',
  'signIn.rateLimited': 'Too many tries. Wait {seconds, plural, one {# second} other {# seconds}}, then try again.',
  'signIn.suspended': 'This account is suspended. Ask the shop for help.',
  'signIn.emailInvalid': 'Enter your email address, like name@example.com.',
  'signIn.passwordMissing': 'Enter your password, or have a code sent to your email.',
  'signIn.codeMissing': 'Enter the 6-digit code from the email.',
  'signIn.createAccount': 'Create an account',
  'secondFactor.title': 'Confirm it is you',
  'secondFactor.totp': 'Enter the code from your authenticator app.',
  'secondFactor.useRecoveryCode': 'Use a recovery code instead',
  'secondFactor.failed': 'The code is not right.',
  'secondFactor.confirm': 'Confirm',
  'secondFactor.withRecoveryCode': 'Confirm with the recovery code',
  'secondFactor.expired': 'The time to confirm it is you ran out. Sign in again.',
  'secondFactor.unavailable': 'This account is protected by a second factor, which these pages cannot ask for yet. Sign in another way the app offers, or ask the shop for help.',
  'createAccount.title': 'Create your {brand} account',
  'createAccount.submit': 'Create account',
  'createAccount.passwordRules': 'At least 8 characters, at most 128.',
  'createAccount.nameMissing': 'Enter your name (at most 100 characters).',
  'createAccount.passwordInvalid': 'Choose a password of 8 to 128 characters.',
  'createAccount.emailTaken': 'An account already uses this email. Sign in with it instead.',
  'createAccount.closed': 'New accounts cannot be created here. Sign in with an account you have.',
  'forgotPassword.title': 'Reset your password',
  'forgotPassword.sent': 'If {email} has an account, a link to reset its password is on its way.',
  'forgotPassword.intro': 'Enter the email of your account. We will send it a link to choose a new password.',
  'forgotPassword.submit': 'Email me a link',
  'forgotPassword.backToSignIn': 'Back to sign in',
  'consent.title': '{app} wants to use your {brand} account',
  'consent.intro': 'If you allow it, {app} can:',
  'consent.allow': 'Allow',
  'consent.deny': 'Deny',
  'scope.openid': 'Know who you are',
  'scope.profile': 'See your name',
  'scope.email': 'See your email address',
  'scope.phone': 'See your phone number',
  'scope.offline_access': 'Stay signed in when you are not using it',
  'scope.account': 'See and change your account, sessions and store credit history',
  'scope.other': 'Use {scope} in your name',
  'signedOut.title': 'You are signed out',
  'signOut.title': 'Sign out of {brand}?',
  'signOut.submit': 'Sign out',
  'signOut.intro': 'This signs you out here and in every app you signed in to through this page.',
  'signedOut.body': 'You signed out here and of the apps you signed in to through this page. You can close this window.',
  'error.badLogoutHint': 'This sign-out link carries a token that was not issued here. Nothing was changed.',
  'error.title': 'Something is not right',
  'error.unknownApp': 'This sign-in link names an app that is not registered here.',
  'error.badRedirect': 'This sign-in link would send you somewhere the app did not register. Nothing was sent.',
  'error.forbidden': 'This form expired or came from another site. Go back, reload the page and try again.',
  'error.tryAgain': 'Go back to the app and start again.',
  'error.notAForm': 'This page takes only the forms it shows. Go back, reload the page and try again.',
  'error.server': 'Something went wrong on our side. Try again in a moment.',
} as const;

export type MessageKey = keyof typeof english;
export type MessageValues = Record<string, string | number>;

const german: Record<MessageKey, string> = {
  'page.skipToContent': 'Zum Formular springen',
  'field.email': 'E-Mail',
  'field.password': 'Passwort',
  'field.newPassword': 'Neues Passwort',
  'field.name': 'Name',
  'field.code': 'Code',
  'field.recoveryCode': 'Wiederherstellungscode',
  'signIn.title': 'Bei {brand} anmelden',
  'signIn.continue': 'Weiter',
  'signIn.withPassword': 'Anmelden',
  'signIn.sendCode': 'Code per E-Mail senden',
  'signIn.withCode': 'Mit dem Code anmelden',
  'signIn.withPasskey': 'Mit einem Passkey anmelden',
  'signIn.passkeyFailed': 'Mit dem Passkey konnten Sie nicht angemeldet werden. Versuchen Sie es erneut oder melden Sie sich auf einem anderen Weg an.',
  'signIn.codeSent': 'Wenn sich {email} hier anmelden kann, ist ein Code dorthin unterwegs. Er gilt {minutes, plural, one {# Minute} other {# Minuten}}.',
  'signIn.failed': 'E-Mail, Passwort oder Code stimmen nicht.',
  'signIn.forgotPassword': 'Passwort vergessen?',
  'signIn.rateLimited': 'Zu viele Versuche. Warten Sie {seconds, plural, one {# Sekunde} other {# Sekunden}} und versuchen Sie es dann erneut.',
  'signIn.suspended': 'Dieses Konto ist gesperrt. Wenden Sie sich an den Shop.',
  'signIn.emailInvalid': 'Geben Sie Ihre E-Mail-Adresse ein, etwa name@example.com.',
  'signIn.passwordMissing': 'Geben Sie Ihr Passwort ein oder lassen Sie sich einen Code per E-Mail senden.',
  'signIn.codeMissing': 'Geben Sie den 6-stelligen Code aus der E-Mail ein.',
  'signIn.createAccount': 'Konto erstellen',
  'secondFactor.title': 'Bestätigen Sie, dass Sie es sind',
  'secondFactor.totp': 'Geben Sie den Code aus Ihrer Authenticator-App ein.',
  'secondFactor.useRecoveryCode': 'Stattdessen einen Wiederherstellungscode verwenden',
  'secondFactor.failed': 'Der Code stimmt nicht.',
  'secondFactor.confirm': 'Bestätigen',
  'secondFactor.withRecoveryCode': 'Mit dem Wiederherstellungscode bestätigen',
  'secondFactor.expired': 'Die Zeit für die Bestätigung ist abgelaufen. Melden Sie sich erneut an.',
  'secondFactor.unavailable': 'Dieses Konto ist mit einem zweiten Faktor geschützt, den diese Seiten noch nicht abfragen können. Melden Sie sich auf einem anderen Weg an, den die App anbietet, oder wenden Sie sich an den Shop.',
  'createAccount.title': 'Ihr {brand}-Konto erstellen',
  'createAccount.submit': 'Konto erstellen',
  'createAccount.passwordRules': 'Mindestens 8 Zeichen, höchstens 128.',
  'createAccount.nameMissing': 'Geben Sie Ihren Namen ein (höchstens 100 Zeichen).',
  'createAccount.passwordInvalid': 'Wählen Sie ein Passwort mit 8 bis 128 Zeichen.',
  'createAccount.emailTaken': 'Ein Konto verwendet diese E-Mail-Adresse bereits. Melden Sie sich stattdessen damit an.',
  'createAccount.closed': 'Hier können keine neuen Konten erstellt werden. Melden Sie sich mit einem vorhandenen Konto an.',
  'forgotPassword.title': 'Passwort zurücksetzen',
  'forgotPassword.sent': 'Wenn {email} ein Konto hat, ist ein Link zum Zurücksetzen des Passworts unterwegs.',
  'forgotPassword.intro': 'Geben Sie die E-Mail-Adresse Ihres Kontos ein. Wir senden einen Link, mit dem Sie ein neues Passwort wählen können.',
  'forgotPassword.submit': 'Link per E-Mail senden',
  'forgotPassword.backToSignIn': 'Zurück zur Anmeldung',
  'consent.title': '{app} möchte Ihr {brand}-Konto verwenden',
  'consent.intro': 'Wenn Sie zustimmen, kann {app}:',
  'consent.allow': 'Zulassen',
  'consent.deny': 'Ablehnen',
  'scope.openid': 'wissen, wer Sie sind',
  'scope.profile': 'Ihren Namen sehen',
  'scope.email': 'Ihre E-Mail-Adresse sehen',
  'scope.phone': 'Ihre Telefonnummer sehen',
  'scope.offline_access': 'angemeldet bleiben, auch wenn Sie die App nicht nutzen',
  'scope.account': 'Ihr Konto, Ihre Sitzungen und Ihr Guthabenkonto sehen und ändern',
  'scope.other': '{scope} in Ihrem Namen nutzen',
  'signedOut.title': 'Sie sind abgemeldet',
  'signOut.title': 'Von {brand} abmelden?',
  'signOut.submit': 'Abmelden',
  'signOut.intro': 'Damit melden Sie sich hier und in jeder App ab, bei der Sie sich über diese Seite angemeldet haben.',
  'signedOut.body': 'Sie haben sich hier und bei den Apps abgemeldet, bei denen Sie sich über diese Seite angemeldet hatten. Sie können dieses Fenster schließen.',
  'error.badLogoutHint': 'Dieser Abmeldelink enthält ein Token, das nicht hier ausgestellt wurde. Es wurde nichts geändert.',
  'error.title': 'Etwas stimmt nicht',
  'error.unknownApp': 'Dieser Anmeldelink nennt eine App, die hier nicht registriert ist.',
  'error.badRedirect': 'Dieser Anmeldelink würde Sie an eine Adresse schicken, die die App nicht registriert hat. Es wurde nichts gesendet.',
  'error.forbidden': 'Dieses Formular ist abgelaufen oder kam von einer anderen Website. Gehen Sie zurück, laden Sie die Seite neu und versuchen Sie es erneut.',
  'error.tryAgain': 'Gehen Sie zurück zur App und beginnen Sie von vorn.',
  'error.notAForm': 'Diese Seite nimmt nur die Formulare an, die sie zeigt. Gehen Sie zurück, laden Sie die Seite neu und versuchen Sie es erneut.',
  'error.server': 'Bei uns ist etwas schiefgegangen. Versuchen Sie es gleich noch einmal.',
};

const CATALOGUES: Record<PageLocale, Record<MessageKey, string>> = { en: english, de: german };

/** Compiled messages, by locale and key: the catalogues are fixed, so each compiles once. */
const compiled = new Map<string, IntlMessageFormat>();

/** The catalogue's text for `key` in `locale`, with `values` put in (numbers and plurals as the locale writes them). */
export function message(locale: PageLocale, key: MessageKey, values?: MessageValues): string {
  const cacheKey = `${locale}\u0000${key}`;
  let format = compiled.get(cacheKey);
  if (format === undefined) {
    format = new IntlMessageFormat(CATALOGUES[locale][key], locale);
    compiled.set(cacheKey, format);
  }
  return String(format.format(values));
}

/** Every key of the catalogues, for the test that holds each language to all of them. */
export const MESSAGE_KEYS = Object.keys(english) as MessageKey[];
export const catalogueOf = (locale: PageLocale): Readonly<Record<MessageKey, string>> => CATALOGUES[locale];
