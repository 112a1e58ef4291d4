import { MessageCatalogue, type MessageValues } from '../message-catalogue.js';

/** The languages of the emails the hosted sign-in pages cause (API.md section 18): the page's own. */
export const MAIL_LOCALES = ['en', 'de'] as const;
export type MailLocale = (typeof MAIL_LOCALES)[number];

/**
 * The English catalogue of those emails, in ICU MessageFormat; German has exactly these keys.
 * `{until}` is a time in the words of an email (`2026-11-24 20:25 UTC`).
 */
const english = {
  'reset.subject': 'Reset your password',
  'reset.lead': 'Someone asked to reset the password of the account with this email address.',
  'reset.action': 'Choose a new password',
  'reset.after': 'The link works once, until {until}. If you did not ask for it, ignore this email: your password stays as it is.',
  'verification.subject': 'Confirm your email address',
  'verification.lead': 'Please confirm that this email address belongs to your account.',
  'verification.action': 'Confirm the address',
  'verification.after': 'The link works once, until {until}.',
  'code.subject': 'Your sign-in code: {code}',
  'code.lead': 'Your code to sign in is {code}.',
  'code.after': 'It works once, until {until}, and only the newest code you asked for works. If you did not ask for it, ignore this email: nobody can sign in without the code.',
} as const;

export type MailMessageKey = keyof typeof english;

const german: Record<MailMessageKey, string> = {
  'reset.subject': 'Setzen Sie Ihr Passwort zurück',
  'reset.lead': 'Jemand hat verlangt, das Passwort des Kontos mit dieser E-Mail-Adresse zurückzusetzen.',
  'reset.action': 'Neues Passwort wählen',
  'reset.after': 'Der Link funktioniert einmal, bis {until}. Wenn Sie ihn nicht angefordert haben, ignorieren Sie diese E-Mail: Ihr Passwort bleibt, wie es ist.',
  'verification.subject': 'Bestätigen Sie Ihre E-Mail-Adresse',
  'verification.lead': 'Bitte bestätigen Sie, dass diese E-Mail-Adresse zu Ihrem Konto gehört.',
  'verification.action': 'Adresse bestätigen',
  'verification.after': 'Der Link funktioniert einmal, bis {until}.',
  'code.subject': 'Ihr Anmeldecode: {code}',
  'code.lead': 'Ihr Code für die Anmeldung lautet {code}.',
  'code.after': 'Er funktioniert einmal, bis {until}, und nur der neueste angeforderte Code gilt. Wenn Sie ihn nicht angefordert haben, ignorieren Sie diese E-Mail: Ohne den Code kann sich niemand anmelden.',
};

const catalogue = new MessageCatalogue<MailLocale, MailMessageKey>({ en: english, de: german });

/** The catalogue's text for `key` in `locale`, with `values` put in. */
export const mailMessage = (locale: MailLocale, key: MailMessageKey, values?: MessageValues): string => catalogue.format(locale, key, values);

/** Every key, for the test that holds German to all of them. */
export const MAIL_MESSAGE_KEYS = Object.keys(english) as MailMessageKey[];
export const mailCatalogueOf = (locale: MailLocale): Readonly<Record<MailMessageKey, string>> => catalogue.catalogueOf(locale);
