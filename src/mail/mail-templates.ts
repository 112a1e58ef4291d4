import type { Mail } from './mail-outbox.js';
import { mailMessage, type MailLocale } from './mail-messages.js';

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

export const passwordResetMail = (to: string, link: string, expiresAt: Date, locale: MailLocale = 'en') =>
  linkMail(
    to,
    mailMessage(locale, 'reset.subject'),
    mailMessage(locale, 'reset.lead'),
    mailMessage(locale, 'reset.action'),
    link,
    mailMessage(locale, 'reset.after', { until: inWords(expiresAt) }),
  );

export const verificationMail = (to: string, link: string, expiresAt: Date, locale: MailLocale = 'en') =>
  linkMail(
    to,
    mailMessage(locale, 'verification.subject'),
    mailMessage(locale, 'verification.lead'),
    mailMessage(locale, 'verification.action'),
    link,
    mailMessage(locale, 'verification.after', { until: inWords(expiresAt) }),
  );

/** A sign-in code (API.md section 19): the code alone, no link, so a mail scanner that follows links spends nothing. */
export const emailCodeMail = (to: string, code: string, expiresAt: Date, locale: MailLocale = 'en') =>
  noticeMail(to, mailMessage(locale, 'code.subject', { code }), [mailMessage(locale, 'code.lead', { code }), mailMessage(locale, 'code.after', { until: inWords(expiresAt) })]);

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

/** An account at another provider now signs the user in (API.md section 20): from the profile's Connect, or linked by a verified email. */
export const identityLinkedMail = (to: string, providerName: string, at: Date) =>
  noticeMail(to, `Your ${providerName} account was linked to your account`, [
    `Your account at ${providerName} was linked to your account at ${inWords(at)}: it now signs you in.`,
    'If this was not you, unlink it on your profile, change your password and contact the shop at once.',
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
