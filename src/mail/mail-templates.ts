import type { Mail } from './mail-outbox.js';

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);

/** A time in the words of an email: `2026-11-24 20:25 UTC`. */
const inWords = (time: Date) => `${time.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

function linkMail(to: string, subject: string, lead: string, action: string, link: string, after: string): Mail {
  return {
    to,
    subject,
    text: `${lead}\n\n${action}:\n${link}\n\n${after}\n`,
    html: `<p>${escapeHtml(lead)}</p><p><a href="${escapeHtml(link)}">${escapeHtml(action)}</a></p><p>${escapeHtml(after)}</p>`,
  };
}

/** A mail that only tells: it carries no link that acts on the account. */
function noticeMail(to: string, subject: string, paragraphs: string[]): Mail {
  return {
    to,
    subject,
    text: `${paragraphs.join('\n\n')}\n`,
    html: paragraphs.map((paragraph) => `<p>${escapeHtml(paragraph)}</p>`).join(''),
  };
}

export const passwordResetMail = (to: string, link: string, expiresAt: Date) =>
  linkMail(
    to,
    'Reset your password',
    'Someone asked to reset the password of the account with this email address.',
    'Choose a new password',
    link,
    `The link works once, until ${inWords(expiresAt)}. If you did not ask for it, ignore this email: your password stays as it is.`,
  );

export const verificationMail = (to: string, link: string, expiresAt: Date) =>
  linkMail(
    to,
    'Confirm your email address',
    'Please confirm that this email address belongs to your account.',
    'Confirm the address',
    link,
    `The link works once, until ${inWords(expiresAt)}.`,
  );

/** The languages a mail the hosted pages cause is written in (API.md section 18: the pages' language). */
export type MailLanguage = 'en' | 'de';

/** `2026-11-24 20:25 UTC` as a German reader writes it: `24.11.2026, 20:25 UTC`. */
const inGermanWords = (time: Date) => {
  const iso = time.toISOString();
  return `${iso.slice(8, 10)}.${iso.slice(5, 7)}.${iso.slice(0, 4)}, ${iso.slice(11, 16)} UTC`;
};

/**
 * A sign-in code (API.md section 19): the code alone, no link, so a mail scanner that follows
 * links spends nothing. In the language of the page that asked for it (the API's are English).
 */
export const emailCodeMail = (to: string, code: string, expiresAt: Date, language: MailLanguage = 'en') =>
  language === 'de'
    ? noticeMail(to, `Ihr Anmeldecode: ${code}`, [
        `Ihr Code für die Anmeldung ist ${code}.`,
        `Er gilt einmal, bis ${inGermanWords(expiresAt)}, und nur der zuletzt angeforderte Code gilt. Wenn Sie ihn nicht angefordert haben, ignorieren Sie diese E-Mail: Ohne den Code kann sich niemand anmelden.`,
      ])
    : noticeMail(to, `Your sign-in code: ${code}`, [
        `Your code to sign in is ${code}.`,
        `It works once, until ${inWords(expiresAt)}, and only the newest code you asked for works. If you did not ask for it, ignore this email: nobody can sign in without the code.`,
      ]);

export const emailChangedMail = (to: string, newEmail: string, changedAt: Date) =>
  noticeMail(to, 'Your account email address was changed', [
    `The email address of your account was changed from this address to ${newEmail} at ${inWords(changedAt)}.`,
    'Mail about the account now goes to the new address. If you did not make this change, contact the shop at once: someone may have your password.',
  ]);

const ACT_IF_NOT_YOU = 'If this was not you, change your password and contact the shop at once.';
const factorWords = (type: 'totp' | 'webauthn', name: string) => `${type === 'totp' ? 'authenticator app' : 'passkey'} "${name}"`;

export const factorAddedMail = (to: string, factor: { type: 'totp' | 'webauthn'; name: string }, at: Date) =>
  noticeMail(to, 'A second factor was added to your account', [
    `The ${factorWords(factor.type, factor.name)} was added to your account as a second factor at ${inWords(at)}.`,
    ACT_IF_NOT_YOU,
  ]);

export const factorRemovedMail = (to: string, factor: { type: 'totp' | 'webauthn'; name: string }, at: Date) =>
  noticeMail(to, 'A second factor was removed from your account', [
    `The ${factorWords(factor.type, factor.name)} was removed from your account at ${inWords(at)}; your other sessions were signed out.`,
    ACT_IF_NOT_YOU,
  ]);

export const recoveryCodeUsedMail = (to: string, at: Date, codesLeft: number) =>
  noticeMail(to, 'A recovery code of your account was used', [
    `One of your recovery codes was used to sign in or confirm an action at ${inWords(at)}. ${codesLeft} unused code${codesLeft === 1 ? '' : 's'} remain${codesLeft === 1 ? 's' : ''}.`,
    ACT_IF_NOT_YOU,
  ]);

/** At each lock of a user's second-factor checks (API.md section 17); its end rounded up to the minute, never before the lock is over. */
export const secondFactorsLockedMail = (to: string, until: Date) =>
  noticeMail(to, 'Second-factor checks of your account are locked', [
    `Too many wrong second-factor codes (authenticator app codes, recovery codes or passkey responses) were sent in a row for your account, ` +
      `so its second-factor checks are locked until ${inWords(new Date(Math.ceil(until.getTime() / 60_000) * 60_000))}: until then no sign-in or confirmation with a second factor succeeds, not even with the right code.`,
    'If this was you, wait until then and use a fresh code, a recovery code or your passkey. If it was not you, someone may have your password or a signed-in session: change your password, sign out your other sessions, and contact the shop.',
  ]);

export const secondFactorsResetMail = (to: string, at: Date) =>
  noticeMail(to, 'The second factors of your account were reset', [
    `An administrator removed every second factor and recovery code of your account at ${inWords(at)}, and signed out all its sessions.`,
    'Sign in with your password and add a second factor again. If you did not ask for this, contact the shop at once.',
  ]);
