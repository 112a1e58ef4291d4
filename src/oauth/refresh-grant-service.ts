import type { Transaction } from 'kysely';
import type { AuthenticatedApp } from './client-authentication.js';
import { OAuthError } from './oauth-errors.js';
import type { Database } from '../db/tables.js';
import { record, type EventContext } from '../events/event-recorder.js';
import { rotateRefreshToken } from '../sessions/refresh-rotation.js';
import { findUserById } from '../users/user-service.js';
import { signIdToken } from './id-tokens.js';
import type { GrantSigners, ReplayRefusal, TokenReply } from './token-grants.js';

const invalidGrant = () => new OAuthError('invalid_grant', "The refresh token is unknown, expired or revoked, its session has ended, or it is not this client's.", 400);

/**
 * The refresh token grant of an app (API.md section 18; OAuth 2.1 §4.3), in the caller's
 * transaction: the token rotates inside its session as section 10 says, and only the app that
 * started the session may present it (a direct sign-in's or another app's token is
 * `invalid_grant`). A narrower `scope` narrows the new access token only: the session keeps its
 * scopes, the next refresh may ask them all again, and a scope the session was not granted is
 * `invalid_scope` with nothing rotated. With `openid` granted, a new ID token comes along (same
 * `auth_time` and `sid`, no `nonce`; OpenID Connect Core §12.2), its claims those of the scopes
 * granted. A spent token presented after REFRESH_REUSE_INTERVAL has ended its session (recorded
 * as `user.sessions_ended`, cause `refresh_reuse`): a refusal for the caller to commit.
 */
export async function refreshAppTokens(
  trx: Transaction<Database>,
  signers: GrantSigners,
  app: AuthenticatedApp,
  request: { refreshToken: string; scope: string | undefined },
  context: EventContext,
): Promise<{ reply: TokenReply } | ReplayRefusal> {
  const named = [...new Set(request.scope?.split(' ').filter(Boolean) ?? [])];
  const outcome = await rotateRefreshToken(trx, signers.tokenIssuer, request.refreshToken, app.id, named.length > 0 ? named : undefined);
  if ('refusal' in outcome) {
    if (outcome.refusal === 'scope') throw new OAuthError('invalid_scope', 'scope names a scope the session was not granted.', 400);
    if (outcome.refusal !== 'reused') throw invalidGrant();
    if (outcome.endedSessionIds.length > 0) {
      const data = { cause: 'refresh_reuse', session_ids: outcome.endedSessionIds };
      await record(trx, { type: 'user.sessions_ended', subjectType: 'user', subjectId: outcome.userId, data }, { ...context, actorId: null });
    }
    return { replayed: { what: 'refresh_token', userId: outcome.userId, endedSessionIds: outcome.endedSessionIds } };
  }
  const { pair, session } = outcome;
  // A scope an admin has taken from the app since counts no more (section 11), here as at admission:
  // not in the reply, not in the ID token's claims; without offline_access the app may refresh no more.
  const granted = (session.scopes ?? []).filter((scope) => app.scopes.includes(scope));
  if (!granted.includes('offline_access')) throw new OAuthError('invalid_grant', 'The app no longer holds offline_access: sign the user in again.', 400);
  const reply: TokenReply = { ...pair, scope: (named.length > 0 ? named : granted).filter((scope) => granted.includes(scope)).join(' ') };
  if (granted.includes('openid')) {
    const user = await findUserById(trx, session.user_id);
    if (!user) throw invalidGrant();
    reply.id_token = signIdToken(
      signers.idTokens,
      app.idTokenAlgorithm,
      { issuer: signers.issuer, ttlSeconds: signers.tokenIssuer.accessTokenTtlSeconds },
      { user, session, clientId: app.id, scopes: granted, nonce: null, accessToken: pair.access_token },
    );
  }
  return { reply };
}
