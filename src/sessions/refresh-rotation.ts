import type { Transaction } from 'kysely';
import type { Database, SessionRow } from '../db/tables.js';
import { accountSuspended, AppError } from '../http/errors.js';
import { findUserStanding } from './caller-query.js';
import { findRefreshToken, findRefreshTokenForUpdate, insertRefreshToken, markRefreshTokenRotated } from './refresh-token-repository.js';
import { keyFromSecret, sealWithKey, unsealWithKey } from './secrets-at-rest.js';
import { endSessions, extendSession, findSessionForUpdate } from './session-repository.js';
import { hashRefreshToken, newRefreshTokenValue, tokenPair, type TokenPair } from './token-pairs.js';
import type { TokenIssuer } from './token-issuer.js';

export const invalidRefreshToken = () => new AppError('invalid_token', 'The refresh token is invalid, expired or revoked.');

export type RefreshOutcome =
  /** The pair, and the session it belongs to (an app's refresh adds an ID token of it). */
  | { pair: TokenPair; session: SessionRow }
  /** `scope`: an app asked a scope its session was not granted; nothing was rotated. */
  | { refusal: 'invalid' | 'suspended' | 'scope' }
  /** A spent token came back after the interval: its session ended, in the caller's transaction. */
  | { refusal: 'reused'; userId: string; sessionId: string; endedSessionIds: string[] };

/** The successor is sealed with the spent token itself: only its holder can read it back. */
const successorKey = (spent: string) => keyFromSecret('refresh-token-successor', spent);

/**
 * Rotates a refresh token inside its session; a session has one live refresh token at a time.
 * A spent token presented again within REFRESH_REUSE_INTERVAL (one client refreshing twice at
 * once) gets a fresh access token and the very refresh token its rotation issued, read back
 * from the spent token's row, so a replay cannot fork the session. Presented later, it means
 * the token leaked: the session ends in the caller's transaction (which records
 * `user.sessions_ended` with cause `refresh_reuse` and commits before refusing). The session is locked before the token, the order in which
 * sign-outs lock them, so a refresh racing a suspension or a password change cannot deadlock.
 * A session an app started is refreshed only by that app, authenticated at the token endpoint
 * (`appId`; OAuth 2.1 §4.3): to anyone else, the section 3 refresh included, its token is invalid.
 * Such an app may ask `narrowedScopes`, some of its session's scopes: the new access token carries
 * only those, while the session keeps all it was granted (RFC 6749 §6); one it was not granted is
 * refused before anything rotates, so the app keeps its refresh token.
 */
export async function rotateRefreshToken(
  trx: Transaction<Database>,
  issuer: TokenIssuer,
  refreshToken: string,
  appId: string | null = null,
  narrowedScopes?: readonly string[],
): Promise<RefreshOutcome> {
  const tokenHash = hashRefreshToken(refreshToken);
  const found = await findRefreshToken(trx, tokenHash);
  if (!found) return { refusal: 'invalid' };
  const session = await findSessionForUpdate(trx, found.family_id);
  const stored = await findRefreshTokenForUpdate(trx, tokenHash);
  if (!stored || !session || session.client_id !== appId) return { refusal: 'invalid' };
  const user = await findUserStanding(trx, stored.user_id);
  if (!user) return { refusal: 'invalid' };
  // While suspended the answer is the suspension; after it, the token is dead (401).
  if (user.status === 'suspended') return { refusal: 'suspended' };
  if (session.ended_at || session.expires_at.getTime() <= Date.now()) return { refusal: 'invalid' };
  if (stored.revoked_at || stored.expires_at.getTime() <= Date.now()) return { refusal: 'invalid' };
  // A spent token after the interval ends its session whatever it asks; otherwise a scope beyond the session's rotates nothing.
  const scopeRefused = narrowedScopes !== undefined && !narrowedScopes.every((scope) => session.scopes?.includes(scope));
  const signed = narrowedScopes ? { ...session, scopes: [...narrowedScopes] } : session;
  if (stored.used_at) {
    const withinInterval = Date.now() - stored.used_at.getTime() <= issuer.refreshReuseIntervalSeconds * 1000;
    if (withinInterval && stored.successor_sealed) {
      if (scopeRefused) return { refusal: 'scope' };
      const successor = unsealWithKey(successorKey(refreshToken), stored.successor_sealed);
      return { pair: tokenPair(issuer, user.id, signed, successor), session };
    }
    const ended = await endSessions(trx, { userId: user.id, sessionId: session.id });
    return { refusal: 'reused', userId: user.id, sessionId: session.id, endedSessionIds: ended };
  }
  if (scopeRefused) return { refusal: 'scope' };
  const successor = newRefreshTokenValue();
  const expiresAt = new Date(Date.now() + issuer.refreshTokenTtlSeconds * 1000);
  await markRefreshTokenRotated(trx, stored.id, sealWithKey(successorKey(refreshToken), successor));
  await insertRefreshToken(trx, { userId: user.id, familyId: session.id, tokenHash: hashRefreshToken(successor), expiresAt });
  await extendSession(trx, session.id, expiresAt);
  return { pair: tokenPair(issuer, user.id, signed, successor), session };
}

/** The outcome as the route answers it: the pair, or the refusal's error. */
export function pairOrRefusal(outcome: RefreshOutcome): TokenPair {
  if ('pair' in outcome) return outcome.pair;
  throw outcome.refusal === 'suspended' ? accountSuspended() : invalidRefreshToken();
}
