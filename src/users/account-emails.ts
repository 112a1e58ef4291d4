import type { Kysely } from 'kysely';
import type { Config } from '../config.js';
import type { Database } from '../db/tables.js';
import { queueMail } from '../mail/mail-outbox.js';
import { passwordResetMail, verificationMail } from '../mail/mail-templates.js';
import { createAccountToken } from './account-token-repository.js';

export type MailSettings = Pick<Config, 'passwordResetUrl' | 'emailVerificationUrl' | 'passwordResetTtlSeconds' | 'emailVerificationTtlSeconds'>;

const linkFor = (template: string, token: string) => template.replaceAll('{token}', encodeURIComponent(token));

/** A verification link to the user's current address, in the caller's transaction. */
export async function queueVerificationMail(trx: Kysely<Database>, settings: MailSettings, user: { id: string; email: string }): Promise<void> {
  const token = await createAccountToken(trx, { userId: user.id, purpose: 'email_verification', email: user.email, ttlSeconds: settings.emailVerificationTtlSeconds });
  await queueMail(trx, verificationMail(user.email, linkFor(settings.emailVerificationUrl, token), Math.round(settings.emailVerificationTtlSeconds / 3600)));
}

export async function queuePasswordResetMail(trx: Kysely<Database>, settings: MailSettings, user: { id: string; email: string }): Promise<void> {
  const token = await createAccountToken(trx, { userId: user.id, purpose: 'password_reset', email: user.email, ttlSeconds: settings.passwordResetTtlSeconds });
  await queueMail(trx, passwordResetMail(user.email, linkFor(settings.passwordResetUrl, token), Math.round(settings.passwordResetTtlSeconds / 60)));
}
