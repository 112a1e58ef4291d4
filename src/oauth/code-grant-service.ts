import type { Transaction } from 'kysely';
import type { AuthenticatedApp } from './client-authentication.js';
import { OAuthError } from './oauth-errors.js';
import type { Database } from '../db/tables.js';
import { record, type EventContext } from '../events/event-recorder.js';
import { endSessions, findSessionForUpdate } from '../sessions/session-service.js';
import { openAppSession, type ClientDetails, type SessionStart } from '../sessions/token-pairs.js';
import { findUserById, lockUserForLogin } from '../users/user-service.js';
import { hashAuthorizationCode } from './authorization-codes.js';
import { consentStillCovers } from './consent-service.js';
import { lockAuthorizationCode, markAuthorizationCodeUsed } from './authorization-code-repository.js';
import { signIdToken } from './id-tokens.js';
import { verifierMatches } from './pkce.js';
import type { GrantSigners, ReplayRefusal, TokenReply } from './token-grants.js';

export interface CodeExchangeRequest {
  code: string;
  redirectUri: string;
  codeVerifier: string | undefined;
}

const invalidGrant = (description: string) => new OAuthError('invalid_grant', description, 400);

/**
 * The authorization code grant (API.md section 18; OAuth 2.1 §4.1.3), in the caller's
 * transaction. The code's row is locked first, so of two exchanges of one code exactly one finds
 * it unused. A code presented again (RFC 9700 §4.5.3) ends the session its first exchange started,
 * with its refresh tokens: that comes back as a refusal for the caller to commit before answering
 * `invalid_grant`. Every other fault (unknown, expired, another app's, another redirect URI, a
 * PKCE verifier that does not prove the challenge, a sign-in that ended, a user no longer active)
 * is thrown as `invalid_grant` and changes nothing: a failed attempt does not spend the code, so
 * someone who holds a stolen code without its verifier cannot spoil it for the app.
 *
 * The exchange starts the app's session with the sign-in's `auth_time` and `amr`, naming that
 * sign-in (`signin_session_id`), with the granted scopes the app still holds; a refresh token only
 * with `offline_access`, an ID token only with `openid`. The user's row is share-locked, as a
 * login's is, so a password change, suspension or deletion committing meanwhile ends this session
 * too; so is a third-party app's consent, which a withdrawal deletes.
 */
export async function exchangeAuthorizationCode(
  trx: Transaction<Database>,
  signers: GrantSigners,
  app: AuthenticatedApp,
  request: CodeExchangeRequest,
  device: ClientDetails,
  context: EventContext,
): Promise<{ reply: TokenReply } | ReplayRefusal> {
  const code = await lockAuthorizationCode(trx, hashAuthorizationCode(request.code));
  if (!code) throw invalidGrant('The code is unknown.');
  if (code.used_at) {
    const ended = code.session_id ? await endSessions(trx, { userId: code.user_id, sessionId: code.session_id }) : [];
    if (ended.length > 0) {
      await record(trx, { type: 'user.sessions_ended', subjectType: 'user', subjectId: code.user_id, data: { cause: 'code_reuse', session_ids: ended } }, { ...context, actorId: null });
    }
    return { replayed: { what: 'code', userId: code.user_id, endedSessionIds: ended } };
  }
  if (code.client_id !== app.id) throw invalidGrant('The code was not issued to this client.');
  if (code.expires_at.getTime() <= Date.now()) throw invalidGrant('The code has expired.');
  if (code.redirect_uri !== request.redirectUri) throw invalidGrant('redirect_uri is not the one the code was issued for.');
  if (!verifierMatches(request.codeVerifier, code.code_challenge)) throw invalidGrant('code_verifier is missing, malformed, or does not match the code_challenge (S256).');
  const standing = await lockUserForLogin(trx, code.user_id);
  if (!standing || standing.deleted_at || standing.status !== 'active') throw invalidGrant('The user may not sign in.');
  const signIn = await findSessionForUpdate(trx, code.signin_session_id);
  if (!signIn || signIn.user_id !== code.user_id || signIn.ended_at || signIn.expires_at.getTime() <= Date.now()) throw invalidGrant('The sign-in the code came from has ended.');

  // A scope the app no longer holds (an admin took it away within the code's minute) is not granted.
  const scopes = code.scopes.filter((scope) => app.scopes.includes(scope));
  // A third-party app signs in on the strength of the user's consent, which may have been withdrawn since the code.
  if (!app.firstParty && !(await consentStillCovers(trx, code.user_id, app.id, scopes))) throw invalidGrant('The user has withdrawn the consent the code was issued under.');
  const { session, access, refreshToken } = await openAppSession(
    trx,
    signers.tokenIssuer,
    code.user_id,
    device,
    // The sign-in's amr, which the sign-in pages built as one of SessionStart's.
    { amr: code.amr } as SessionStart,
    { clientId: app.id, scopes },
    { authTime: code.auth_time, signinSessionId: code.signin_session_id, offline: scopes.includes('offline_access') },
  );
  await markAuthorizationCodeUsed(trx, code.id, session.id);
  const reply: TokenReply = { ...access, scope: scopes.join(' '), ...(refreshToken !== undefined && { refresh_token: refreshToken }) };
  if (scopes.includes('openid')) {
    const user = await findUserById(trx, code.user_id);
    if (!user) throw invalidGrant('The user may not sign in.');
    reply.id_token = signIdToken(
      signers.idTokens,
      app.idTokenAlgorithm,
      { issuer: signers.issuer, ttlSeconds: signers.tokenIssuer.accessTokenTtlSeconds },
      { user, session, clientId: app.id, scopes, nonce: code.nonce, accessToken: access.access_token },
    );
  }
  return { reply };
}
