import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { record, type EventContext } from '../events/event-recorder.js';
import { inTransaction } from '../db/transaction.js';
import { AppError, notFound, validationFailed } from '../http/errors.js';
import { hashPassword, verifyPassword } from '../sessions/passwords.js';
import { endSessions } from '../sessions/session-repository.js';
import type { TokenIssuer } from '../sessions/token-issuer.js';
import { startSession, type ClientDetails, type TokenPair } from '../sessions/token-pairs.js';
import { findUserById, findUserByIdForUpdate, updateUser } from './user-repository.js';

const wrongPassword = () => new AppError('wrong_password', 'The current password is wrong.');

/**
 * Changes the password and ends every other session: the session version moves on (older
 * access tokens fail) and every refresh token is revoked; a fresh pair is returned.
 */
export async function changePassword(
  db: Kysely<Database>,
  issuer: TokenIssuer,
  userId: string,
  passwords: { current: string; next: string },
  context: EventContext,
  client: ClientDetails,
): Promise<TokenPair> {
  // Read before the transaction, which must not wait on the password hashing; over HTTP this read
  // carries the caller check, so nothing is hashed for a caller who is refused.
  const user = await findUserById(db, userId);
  if (!user) throw notFound('user');
  if (!(await verifyPassword(user.password_hash, passwords.current))) throw wrongPassword();
  if (passwords.next === passwords.current) throw validationFailed('/new_password', 'must differ from the current password');
  const newHash = await hashPassword(passwords.next);
  return inTransaction(db, async (trx) => {
    const locked = await findUserByIdForUpdate(trx, userId);
    if (!locked) throw notFound('user');
    // Hashing ran outside the lock; if the password changed meanwhile, the check above is void.
    if (locked.password_hash !== user.password_hash) throw wrongPassword();
    await updateUser(trx, userId, { password_hash: newHash });
    await endSessions(trx, { userId });
    await record(trx, { type: 'user.password_changed', subjectType: 'user', subjectId: userId, data: { sessions_ended: true } }, context);
    return startSession(trx, issuer, userId, client);
  });
}
