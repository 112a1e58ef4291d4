import type { Mail } from './mail-outbox.js';

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);

function linkMail(to: string, subject: string, lead: string, action: string, link: string, after: string): Mail {
  return {
    to,
    subject,
    text: `${lead}\n\n${action}:\n${link}\n\n${after}\n`,
    html: `<p>${escapeHtml(lead)}</p><p><a href="${escapeHtml(link)}">${escapeHtml(action)}</a></p><p>${escapeHtml(after)}</p>`,
  };
}

export const passwordResetMail = (to: string, link: string, validMinutes: number) =>
  linkMail(
    to,
    'Reset your password',
    'Someone asked to reset the password of the account with this email address.',
    'Choose a new password',
    link,
    `The link works once, for ${validMinutes} minutes. If you did not ask for it, ignore this email: your password stays as it is.`,
  );

export const verificationMail = (to: string, link: string, validHours: number) =>
  linkMail(
    to,
    'Confirm your email address',
    'Please confirm that this email address belongs to your account.',
    'Confirm the address',
    link,
    `The link works once, for ${validHours} hours.`,
  );
