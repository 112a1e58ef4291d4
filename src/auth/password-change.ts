import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { AppError, notFound } from '../http/errors.js';
import { findUserById, findUserByIdForUpdate, updateUser } from '../users/user-repository.js';
import { hashPassword, verifyPassword } from './passwords.js';
import { revokeAllRefreshTokensOfUser } from './refresh-token-repository.js';
import { issueTokenPair, type TokenPair } from './token-pairs.js';

const wrongPassword = () => new AppError(403, 'wrong_password', 'The current password is wrong.');

/**
 * Changes the password and ends every other session: the session version moves on (older
 * access tokens fail) and every refresh token is revoked; a fresh pair is returned.
 */
export async function changePassword(
  app: FastifyInstance,
  db: Kysely<Database>,
  userId: string,
  currentPassword: string,
  newPassword: string,
): Promise<TokenPair> {
  const user = await findUserById(db, userId);
  if (!user) throw notFound('user');
  if (!(await verifyPassword(user.password_hash, currentPassword))) throw wrongPassword();
  const newHash = await hashPassword(newPassword);
  return inTransaction(db, async (trx) => {
    const locked = await findUserByIdForUpdate(trx, userId);
    if (!locked) throw notFound('user');
    // Hashing ran outside the lock; if the password changed meanwhile, the check above is void.
    if (locked.password_hash !== user.password_hash) throw wrongPassword();
    const updated = await updateUser(trx, userId, {
      password_hash: newHash,
      session_version: locked.session_version + 1,
    });
    await revokeAllRefreshTokensOfUser(trx, userId);
    return issueTokenPair(app, trx, updated);
  });
}
