import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { accountSuspended, invalidToken } from '../http/errors.js';
import { findCaller } from './caller-repository.js';
import { findRefreshTokenForUpdate, markRefreshTokenUsed, revokeRefreshTokens } from './refresh-token-repository.js';
import { hashRefreshToken, issueTokenPair, type TokenPair } from './token-pairs.js';
import type { TokenIssuer } from './token-issuer.js';

type RefreshOutcome = { pair: TokenPair } | { refusal: 'invalid' | 'suspended' };

/**
 * Rotates a refresh token. A token presented a second time means it leaked (or a client
 * raced itself): the whole family is revoked, and that revocation is committed before the
 * refusal is returned.
 */
export async function rotateRefreshToken(db: Kysely<Database>, issuer: TokenIssuer, refreshToken: string): Promise<TokenPair> {
  const outcome = await inTransaction(db, async (trx): Promise<RefreshOutcome> => {
    const stored = await findRefreshTokenForUpdate(trx, hashRefreshToken(refreshToken));
    if (!stored) return { refusal: 'invalid' };
    const user = await findCaller(trx, stored.user_id);
    if (!user) return { refusal: 'invalid' };
    // While suspended the answer is the suspension; after it, the token is dead (401).
    if (user.status === 'suspended') return { refusal: 'suspended' };
    if (stored.used_at || stored.revoked_at) {
      await revokeRefreshTokens(trx, { family_id: stored.family_id });
      return { refusal: 'invalid' };
    }
    if (stored.expires_at.getTime() <= Date.now()) return { refusal: 'invalid' };
    await markRefreshTokenUsed(trx, stored.id);
    return { pair: await issueTokenPair(trx, issuer, user, stored.family_id) };
  });
  if ('refusal' in outcome) throw outcome.refusal === 'suspended' ? accountSuspended() : invalidToken();
  return outcome.pair;
}
