import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { record, type EventContext } from '../events/event-recorder.js';
import { AppError, notFound } from '../http/errors.js';
import type { MailLocale } from '../mail/mail-messages.js';
import { hashPassword } from '../sessions/passwords.js';
import { queuePasswordResetMail, resendVerificationMail, type MailSettings } from './account-emails.js';
import { clearLoginFailures, countVerificationResend } from './account-limit-service.js';
import { accountTokenIsLive, countRecentAccountTokens, findLiveAccountToken, spendAccountTokens } from './account-token-repository.js';
import { endEverySession } from './credential-changes.js';
import { findUserByEmail, findUserByIdForUpdate, updateUser } from './user-repository.js';

const invalidResetToken = () => new AppError('invalid_reset_token', 'The password-reset link is unknown, used or expired; ask for a new one.');
const invalidVerificationToken = () => new AppError('invalid_verification_token', 'The verification link is unknown, used or expired; ask for a new one.');

/** Reset mails an account gets in an hour, whatever the addresses asking (API.md section 10). */
const RESET_MAILS_AN_HOUR = 3;

/**
 * Queues a reset link when an active user has this email and has had fewer than 3 in the last
 * hour. The route answers before this runs, so the reply says nothing, in its content or its
 * timing, about which addresses have accounts. The hosted pages ask for the mail in their language.
 */
export async function requestPasswordReset(db: Kysely<Database>, email: string, mail: MailSettings, language?: MailLocale): Promise<void> {
  await inTransaction(db, async (trx) => {
    const found = await findUserByEmail(trx, email);
    // Locked, so that requests racing each other count each other's links.
    const user = found && (await findUserByIdForUpdate(trx, found.id));
    if (user?.status !== 'active') return;
    if ((await countRecentAccountTokens(trx, user.id, 'password_reset', 3600)) >= RESET_MAILS_AN_HOUR) return;
    await queuePasswordResetMail(trx, mail, user, language);
  });
}

/**
 * Sets the new password, spends every outstanding reset link, ends every session and starts the
 * account's failed-login count afresh. A token that is not live is refused before the new
 * password is hashed, so bogus confirmations cost an argon2 hash nothing.
 */
export async function confirmPasswordReset(db: Kysely<Database>, token: string, newPassword: string, context: EventContext): Promise<void> {
  if (!(await accountTokenIsLive(db, 'password_reset', token))) throw invalidResetToken();
  const passwordHash = await hashPassword(newPassword);
  await inTransaction(db, async (trx) => {
    const stored = await findLiveAccountToken(trx, 'password_reset', token);
    if (!stored) throw invalidResetToken();
    const user = await findUserByIdForUpdate(trx, stored.user_id);
    if (!user || user.status !== 'active' || user.email.toLowerCase() !== stored.email.toLowerCase()) throw invalidResetToken();
    await updateUser(trx, user.id, { password_hash: passwordHash });
    const ended = await endEverySession(trx, user.id);
    await clearLoginFailures(trx, user.email);
    await record(trx, { type: 'user.password_reset', subjectType: 'user', subjectId: user.id, data: { sessions_ended: ended.length } }, { ...context, actorId: user.id });
  });
}

/** Marks the address verified, if the link was sent to the address the user still has. */
export async function confirmEmailVerification(trx: Transaction<Database>, token: string, context: EventContext): Promise<void> {
  const stored = await findLiveAccountToken(trx, 'email_verification', token);
  if (!stored) throw invalidVerificationToken();
  const user = await findUserByIdForUpdate(trx, stored.user_id);
  if (!user || user.email.toLowerCase() !== stored.email.toLowerCase()) throw invalidVerificationToken();
  await spendAccountTokens(trx, user.id, 'email_verification');
  if (user.email_verified) return;
  await updateUser(trx, user.id, { email_verified: true });
  await record(
    trx,
    { type: 'user.email_verified', subjectType: 'user', subjectId: user.id, data: { before: { email_verified: false }, after: { email_verified: true }, email: user.email } },
    { ...context, actorId: user.id },
  );
}

/**
 * The live verification link again (a new one only when none lives), unless the address is
 * verified already. Every request counts against the user's limits, at most one a minute and
 * 5 in 24 hours (429 beyond), whether or not a mail goes out.
 */
export async function resendVerification(trx: Transaction<Database>, userId: string, mail: MailSettings): Promise<void> {
  const user = await findUserByIdForUpdate(trx, userId);
  if (!user) throw notFound('user');
  await countVerificationResend(trx, user.id);
  if (!user.email_verified) await resendVerificationMail(trx, mail, user);
}
