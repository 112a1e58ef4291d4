import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { accountSuspended, invalidToken } from '../http/errors.js';
import { findUserById } from '../users/user-repository.js';
import { findRefreshTokenForUpdate, markRefreshTokenUsed, revokeRefreshTokenFamily } from './refresh-token-repository.js';
import { hashRefreshToken, issueTokenPair, type TokenPair } from './token-pairs.js';

type RefreshOutcome = { pair: TokenPair } | { refusal: 'invalid' | 'suspended' };

/**
 * Rotates a refresh token. A token presented a second time means it leaked (or a client
 * raced itself): the whole family is revoked, and that revocation is committed before the
 * refusal is returned.
 */
export async function rotateRefreshToken(app: FastifyInstance, db: Kysely<Database>, refreshToken: string): Promise<TokenPair> {
  const outcome = await inTransaction(db, async (trx): Promise<RefreshOutcome> => {
    const stored = await findRefreshTokenForUpdate(trx, hashRefreshToken(refreshToken));
    if (!stored) return { refusal: 'invalid' };
    if (stored.used_at || stored.revoked_at) {
      await revokeRefreshTokenFamily(trx, stored.family_id);
      return { refusal: 'invalid' };
    }
    if (stored.expires_at.getTime() <= Date.now()) return { refusal: 'invalid' };
    const user = await findUserById(trx, stored.user_id);
    if (!user) return { refusal: 'invalid' };
    if (user.status === 'suspended') return { refusal: 'suspended' };
    await markRefreshTokenUsed(trx, stored.id);
    return { pair: await issueTokenPair(app, trx, user, stored.family_id) };
  });
  if ('refusal' in outcome) throw outcome.refusal === 'suspended' ? accountSuspended() : invalidToken();
  return outcome.pair;
}
