import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { accountSuspended, invalidToken } from '../http/errors.js';
import { findCaller } from './caller-repository.js';
import { findRefreshTokenForUpdate, markRefreshTokenUsed } from './refresh-token-repository.js';
import { endSessions, findSessionForUpdate } from './session-repository.js';
import { hashRefreshToken, issueTokenPair, type TokenPair } from './token-pairs.js';
import type { TokenIssuer } from './token-issuer.js';

type RefreshOutcome = { pair: TokenPair } | { refusal: 'invalid' | 'suspended' };

/**
 * Rotates a refresh token inside its session. A spent token presented again within
 * REFRESH_REUSE_INTERVAL gets a fresh pair (one client refreshing twice at once); later, it
 * means the token leaked, and the session ends, committed before the refusal is returned.
 */
export async function rotateRefreshToken(db: Kysely<Database>, issuer: TokenIssuer, refreshToken: string): Promise<TokenPair> {
  const outcome = await inTransaction(db, async (trx): Promise<RefreshOutcome> => {
    const stored = await findRefreshTokenForUpdate(trx, hashRefreshToken(refreshToken));
    if (!stored) return { refusal: 'invalid' };
    const user = await findCaller(trx, stored.user_id);
    if (!user) return { refusal: 'invalid' };
    // While suspended the answer is the suspension; after it, the token is dead (401).
    if (user.status === 'suspended') return { refusal: 'suspended' };
    const session = await findSessionForUpdate(trx, stored.family_id);
    if (!session || session.ended_at || session.expires_at.getTime() <= Date.now()) return { refusal: 'invalid' };
    if (stored.revoked_at || stored.expires_at.getTime() <= Date.now()) return { refusal: 'invalid' };
    if (stored.used_at) {
      // The same client refreshing twice at once gets a pair; a token replayed later has leaked.
      if (Date.now() - stored.used_at.getTime() <= issuer.refreshReuseIntervalSeconds * 1000) {
        return { pair: await issueTokenPair(trx, issuer, user.id, session.id) };
      }
      await endSessions(trx, { userId: user.id, sessionId: session.id });
      return { refusal: 'invalid' };
    }
    await markRefreshTokenUsed(trx, stored.id);
    return { pair: await issueTokenPair(trx, issuer, user.id, session.id) };
  });
  if ('refusal' in outcome) throw outcome.refusal === 'suspended' ? accountSuspended() : invalidToken();
  return outcome.pair;
}
