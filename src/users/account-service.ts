import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { record, type EventContext } from '../events/event-recorder.js';
import { AppError } from '../http/errors.js';
import { hashPassword } from '../sessions/passwords.js';
import { endSessions } from '../sessions/session-repository.js';
import { queuePasswordResetMail, queueVerificationMail, type MailSettings } from './account-emails.js';
import { findLiveAccountToken, spendAccountTokens } from './account-token-repository.js';
import { findUserByEmail, findUserByIdForUpdate, updateUser } from './user-repository.js';

const invalidResetToken = () => new AppError('invalid_reset_token', 'The password-reset link is unknown, used or expired; ask for a new one.');
const invalidVerificationToken = () => new AppError('invalid_verification_token', 'The verification link is unknown, used or expired; ask for a new one.');

/**
 * Queues a reset link when an active user has this email; answers the same either way, so
 * the reply says nothing about which addresses have accounts.
 */
export async function requestPasswordReset(db: Kysely<Database>, email: string, mail: MailSettings): Promise<void> {
  await inTransaction(db, async (trx) => {
    const user = await findUserByEmail(trx, email);
    if (user?.status === 'active') await queuePasswordResetMail(trx, mail, user);
  });
}

/** Sets the new password, spends every outstanding reset link and ends every session. */
export async function confirmPasswordReset(db: Kysely<Database>, token: string, newPassword: string, context: EventContext): Promise<void> {
  const passwordHash = await hashPassword(newPassword);
  await inTransaction(db, async (trx) => {
    const stored = await findLiveAccountToken(trx, 'password_reset', token);
    if (!stored) throw invalidResetToken();
    const user = await findUserByIdForUpdate(trx, stored.user_id);
    if (!user || user.status !== 'active' || user.email.toLowerCase() !== stored.email.toLowerCase()) throw invalidResetToken();
    await updateUser(trx, user.id, { password_hash: passwordHash });
    await spendAccountTokens(trx, user.id, 'password_reset');
    const ended = await endSessions(trx, { userId: user.id });
    await record(trx, { type: 'user.password_reset', subjectType: 'user', subjectId: user.id, data: { sessions_ended: ended.length } }, { ...context, actorId: user.id });
  });
}

/** Marks the address verified, if the link was sent to the address the user still has. */
export async function confirmEmailVerification(db: Kysely<Database>, token: string, context: EventContext): Promise<void> {
  await inTransaction(db, async (trx) => {
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
  });
}

/** Another verification link, unless the address is verified already. */
export async function resendVerification(db: Kysely<Database>, userId: string, mail: MailSettings): Promise<void> {
  await inTransaction(db, async (trx) => {
    const user = await findUserByIdForUpdate(trx, userId);
    if (user && !user.email_verified) await queueVerificationMail(trx, mail, user);
  });
}
