import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { callerAlone } from '../sessions/caller-query.js';
import { findRefreshToken, findSession } from '../sessions/session-service.js';
import { hashRefreshToken } from '../sessions/token-pairs.js';
import { isClientToken, type TokenIssuer } from '../sessions/token-issuer.js';
import type { AuthenticatedClient } from './client-authentication.js';
import type { TokenTypeHint } from './revocation-service.js';

/** RFC 7662 §2.2: an inactive token says nothing more. */
export type Introspection =
  | { active: false }
  | { active: true; token_type: TokenTypeHint; sub: string; client_id: string; scope: string; exp: number; iat: number; sid: string; iss: string };

const INACTIVE: Introspection = { active: false };


const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

/**
 * Whether the session an app holds for a user is live now, as the admission would judge a token of
 * it on the next request (session open, user active and not deleted, app enabled and not
 * deleted), and the scopes its tokens may use now (the token's that the app still holds).
 */
async function liveAppSession(db: Kysely<Database>, key: { userId: string; sessionId: string; clientId: string; scopes: readonly string[] }): Promise<string[] | undefined> {
  const [row] = await callerAlone(db, { kind: 'app-user', ...key });
  if (!row || !row.caller__live || row.caller__status !== 'active') return undefined;
  // In the order they were granted (the database's intersection has none of its own).
  const usable = new Set(row.caller__scopes ?? []);
  return key.scopes.filter((scope) => usable.has(scope));
}

async function introspectAccessToken(db: Kysely<Database>, issuer: TokenIssuer, client: AuthenticatedClient, token: string, iss: string): Promise<Introspection | undefined> {
  const claims = await issuer.verifyAccessToken(token);
  // A client's own token, or a direct sign-in's (no app): not an app's token to tell about.
  if (!claims || isClientToken(claims) || claims.client_id === undefined) return undefined;
  if (client.type !== 'service' && claims.client_id !== client.id) return INACTIVE;
  const scopes = await liveAppSession(db, { userId: claims.sub, sessionId: claims.sid, clientId: claims.client_id, scopes: (claims.scope ?? '').split(' ').filter(Boolean) });
  if (!scopes) return INACTIVE;
  return { active: true, token_type: 'access_token', sub: claims.sub, client_id: claims.client_id, scope: scopes.join(' '), exp: claims.exp, iat: claims.iat, sid: claims.sid, iss };
}

async function introspectRefreshToken(db: Kysely<Database>, client: AuthenticatedClient, token: string, iss: string): Promise<Introspection | undefined> {
  const stored = await findRefreshToken(db, hashRefreshToken(token));
  if (!stored) return undefined;
  // A refresh token is its app's alone: no service client (a resource server) is ever sent one.
  const session = await findSession(db, stored.family_id);
  if (!session || session.client_id === null || session.client_id !== client.id) return INACTIVE;
  if (stored.revoked_at || stored.used_at || stored.expires_at.getTime() <= Date.now()) return INACTIVE;
  const scopes = await liveAppSession(db, { userId: stored.user_id, sessionId: session.id, clientId: session.client_id, scopes: session.scopes ?? [] });
  if (!scopes) return INACTIVE;
  return { active: true, token_type: 'refresh_token', sub: stored.user_id, client_id: session.client_id, scope: scopes.join(' '), exp: seconds(stored.expires_at), iat: seconds(stored.created_at), sid: session.id, iss };
}

/**
 * RFC 7662 for the authorization server (API.md section 18). Who sees what:
 * - a confidential app: its own tokens only (access and refresh); another app's are inactive to it;
 * - a service client (a resource server an app sends a user's token to), whatever its scopes:
 *   access tokens of every app, which tell it nothing their JWT does not already say but whether
 *   they still count; refresh tokens never (only their app ever holds them).
 * Tokens of direct sign-ins and of API clients are not introspected here: inactive. A token is
 * active while a request with it would be admitted now: its session open, its user active, its app enabled.
 */
export async function introspectToken(db: Kysely<Database>, issuer: TokenIssuer, client: AuthenticatedClient, token: string, hint: TokenTypeHint | undefined, iss: string): Promise<Introspection> {
  const asAccess = () => introspectAccessToken(db, issuer, client, token, iss);
  const asRefresh = () => introspectRefreshToken(db, client, token, iss);
  const [first, second] = hint === 'refresh_token' ? [asRefresh, asAccess] : [asAccess, asRefresh];
  return (await first()) ?? (await second()) ?? INACTIVE;
}
