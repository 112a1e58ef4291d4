import type { Transaction } from 'kysely';
import type { Database } from '../db/tables.js';
import type { EventContext } from '../events/event-recorder.js';
import { findRefreshToken, findSessionForUpdate } from '../sessions/session-service.js';
import { hashRefreshToken } from '../sessions/token-pairs.js';
import { isClientToken, type TokenIssuer } from '../sessions/token-issuer.js';
import { signOut } from '../users/sign-out-service.js';
import type { AuthenticatedClient } from './client-authentication.js';

export type TokenTypeHint = 'access_token' | 'refresh_token';

/**
 * The session a token names, as far as the token itself tells: a refresh token by its hash (its
 * family is its session), an access token of a user's session by its verified signature (`sid`).
 * A client's own token, an unknown or expired one, names none.
 */
async function sessionNamedBy(trx: Transaction<Database>, issuer: TokenIssuer, token: string, hint: TokenTypeHint | undefined): Promise<string | undefined> {
  const byRefresh = async () => (await findRefreshToken(trx, hashRefreshToken(token)))?.family_id;
  const byAccess = async () => {
    const claims = await issuer.verifyAccessToken(token);
    return claims && !isClientToken(claims) ? claims.sid : undefined;
  };
  // RFC 7009 §2.1: the hint says where to look first; the other kind is looked at too.
  const [first, second] = hint === 'access_token' ? [byAccess, byRefresh] : [byRefresh, byAccess];
  return (await first()) ?? (await second());
}

/**
 * RFC 7009 for an app (API.md section 18): a refresh or access token of a session the
 * authenticating app holds ends that session (its refresh tokens revoked, its access tokens
 * refused on their next request) and records `user.sessions_ended` (cause `logout`, the app its
 * actor). Anything else (an unknown token, another app's, a direct sign-in's, a session already
 * ended, any token a service client sends) changes nothing, and the answer is the same.
 * Returns whether a session ended.
 */
export async function revokeToken(trx: Transaction<Database>, issuer: TokenIssuer, client: AuthenticatedClient, token: string, hint: TokenTypeHint | undefined, context: EventContext): Promise<boolean> {
  if (client.type === 'service') return false;
  const sessionId = await sessionNamedBy(trx, issuer, token, hint);
  if (!sessionId) return false;
  const session = await findSessionForUpdate(trx, sessionId);
  if (!session || session.client_id !== client.id || session.ended_at) return false;
  const ended = await signOut(trx, { userId: session.user_id, sessionId: session.id }, 'logout', { ...context, actorId: client.id, actorType: 'client' });
  return ended.length > 0;
}
