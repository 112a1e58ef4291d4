import { randomInt } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Config } from '../config.js';
import type { Database } from '../db/tables.js';
import { queueMail } from '../mail/mail-outbox.js';
import type { MailLocale } from '../mail/mail-messages.js';
import { emailChangedMail, emailCodeMail, passwordResetMail, verificationMail } from '../mail/mail-templates.js';
import type { SecretsAtRest } from '../sessions/secrets-at-rest.js';
import { createAccountToken, findResendableAccountToken, spendAccountTokens } from './account-token-repository.js';
import { insertEmailCode, type PendingSignup } from './email-code-repository.js';

export type MailSettings = Pick<Config, 'passwordResetUrl' | 'emailVerificationUrl' | 'passwordResetTtlSeconds' | 'emailVerificationTtlSeconds' | 'emailCodeTtlSeconds'> & {
  /** Seals the live verification link, so that a resend sends the same link. */
  secrets: SecretsAtRest;
};

const linkFor = (template: string, token: string) => template.replaceAll('{token}', encodeURIComponent(token));

/**
 * A new verification link to the user's current address, in the caller's transaction; links
 * sent before (to this or an earlier address) stop working.
 */
export async function queueVerificationMail(trx: Transaction<Database>, settings: MailSettings, user: { id: string; email: string }, language?: MailLocale): Promise<void> {
  await spendAccountTokens(trx, user.id, 'email_verification');
  const token = await createAccountToken(trx, {
    userId: user.id,
    purpose: 'email_verification',
    email: user.email,
    ttlSeconds: settings.emailVerificationTtlSeconds,
    seal: (value) => settings.secrets.seal(value),
  });
  await queueMail(trx, verificationMail(user.email, linkFor(settings.emailVerificationUrl, token.value), token.expiresAt, language));
}

/** The live verification link again, the same one (a new one only when none lives). */
export async function resendVerificationMail(trx: Transaction<Database>, settings: MailSettings, user: { id: string; email: string }, language?: MailLocale): Promise<void> {
  const live = await findResendableAccountToken(trx, user.id, 'email_verification', user.email);
  if (!live) return queueVerificationMail(trx, settings, user, language);
  const value = settings.secrets.open(live.sealed_token!);
  await queueMail(trx, verificationMail(user.email, linkFor(settings.emailVerificationUrl, value), live.expires_at, language));
}

export async function queuePasswordResetMail(trx: Transaction<Database>, settings: MailSettings, user: { id: string; email: string }, language?: MailLocale): Promise<void> {
  const token = await createAccountToken(trx, { userId: user.id, purpose: 'password_reset', email: user.email, ttlSeconds: settings.passwordResetTtlSeconds });
  await queueMail(trx, passwordResetMail(user.email, linkFor(settings.passwordResetUrl, token.value), token.expiresAt, language));
}

/**
 * A new 6-digit sign-in code to `email`, for the account that has it (null: none yet, and then
 * perhaps the create-account page's name and password for the account it makes), in the
 * caller's transaction.
 */
export async function queueEmailCodeMail(
  trx: Transaction<Database>,
  settings: MailSettings,
  code: { email: string; userId: string | null; signup?: PendingSignup },
  language?: MailLocale,
): Promise<void> {
  const value = String(randomInt(0, 1_000_000)).padStart(6, '0');
  const { expiresAt } = await insertEmailCode(trx, { ...code, value, ttlSeconds: settings.emailCodeTtlSeconds });
  await queueMail(trx, emailCodeMail(code.email, value, expiresAt, language));
}

/** The notice to the address an account leaves: no link that acts on the account. */
export function queueEmailChangedNotice(trx: Transaction<Database>, oldEmail: string, newEmail: string): Promise<void> {
  return queueMail(trx, emailChangedMail(oldEmail, newEmail, new Date()));
}
