import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database, SessionRow } from '../db/tables.js';
import { insertRefreshToken } from './refresh-token-repository.js';
import { insertSession } from './session-repository.js';
import type { AppGrant, TokenIssuer } from './token-issuer.js';

export interface TokenPair {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
}

/** Refresh tokens are stored only as a SHA-256: 256 random bits need no slow hash. */
export function hashRefreshToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** 256 random bits, base64url: a refresh token's value. */
export const newRefreshTokenValue = () => randomBytes(32).toString('base64url');

/** What an access token says of its session: how and when the user authenticated to start it. */
export interface SessionAuthentication {
  id: string;
  amr: string[];
  auth_time: Date;
  /** The app that started the session for the user, and the scopes granted to it; null for a direct sign-in. */
  client_id?: string | null;
  scopes?: string[] | null;
}

/** The reply of a login or a refresh: a new access token beside the session's refresh token. */
export function tokenPair(issuer: TokenIssuer, userId: string, session: SessionAuthentication, refreshToken: string): TokenPair {
  return {
    access_token: issuer.signAccessToken(
      userId,
      session.id,
      { amr: session.amr, authTime: session.auth_time },
      session.client_id ? { clientId: session.client_id, scopes: session.scopes ?? [] } : undefined,
    ),
    token_type: 'Bearer',
    expires_in: issuer.accessTokenTtlSeconds,
    refresh_token: refreshToken,
  };
}

export interface ClientDetails {
  userAgent: string | undefined;
  ip: string;
}

/** The device a session is shown with in session lists. */
export const clientOf = (request: { headers: { 'user-agent'?: string | undefined }; ip: string }): ClientDetails => ({
  userAgent: request.headers['user-agent'],
  ip: request.ip,
});

/**
 * How a session starts (RFC 8176 `amr`): a password or an email code alone, or followed by a
 * second factor (`otp` a TOTP code, `hwk` a passkey, a recovery code adding only `mfa`); or a
 * passkey (`hwk`) alone, with user verification (`mfa`: it counts as two factors), or followed by
 * a TOTP code or a recovery code (API.md section 19). Where `mfa` is among them, the second
 * factor counts as verified for step-up from the start.
 */
export type SessionStart =
  | { amr: ['pwd'] | ['email'] }
  | { amr: ['pwd' | 'email', 'otp' | 'hwk', 'mfa'] | ['pwd' | 'email', 'mfa'] }
  | { amr: ['hwk'] | ['hwk', 'mfa'] | ['hwk', 'otp', 'mfa'] }
  // Another identity provider's sign-in (API.md section 20), alone or followed by a second factor.
  | { amr: ['fed'] | ['fed', 'otp' | 'hwk', 'mfa'] | ['fed', 'mfa'] };
export const PASSWORD_ONLY: SessionStart = { amr: ['pwd'] };
export const EMAIL_CODE_ONLY: SessionStart = { amr: ['email'] };
export const FEDERATED_ONLY: SessionStart = { amr: ['fed'] };

/** How a session other than a plain login starts (API.md section 18). */
export interface SessionOptions {
  /** When the user authenticated: an app's session keeps its sign-in's (default now). */
  authTime?: Date;
  /** An app's session: the hosted pages' sign-in session it came from. */
  signinSessionId?: string;
  /** A sign-in session of the hosted pages: SHA-256 of its browser cookie's secret. */
  browserSecretHash?: string;
  /** How long the session lives (default REFRESH_TOKEN_TTL): a sign-in session's SIGNIN_SESSION_TTL. */
  lifetimeSeconds?: number;
}

/**
 * A login: a new session and its first pair, in the caller's transaction. With `app`, the
 * session an app starts for the user (API.md section 18), whose tokens act within its scopes.
 */
export async function startSession(db: Kysely<Database>, issuer: TokenIssuer, userId: string, client: ClientDetails, start: SessionStart = PASSWORD_ONLY, app?: AppGrant): Promise<TokenPair> {
  return (await openSession(db, issuer, userId, client, start, app)).pair;
}

/** `startSession` with the options of section 18's sessions, answering the session beside its first pair. */
export async function openSession(
  db: Kysely<Database>,
  issuer: TokenIssuer,
  userId: string,
  client: ClientDetails,
  start: SessionStart = PASSWORD_ONLY,
  app?: AppGrant,
  options: SessionOptions = {},
): Promise<{ session: SessionRow; pair: TokenPair }> {
  const session = await insertNewSession(db, issuer, userId, client, start, app, options);
  const refreshToken = newRefreshTokenValue();
  await insertRefreshToken(db, { userId, familyId: session.id, tokenHash: hashRefreshToken(refreshToken), expiresAt: session.expires_at });
  return { session, pair: tokenPair(issuer, userId, session, refreshToken) };
}

/** An access token's reply without a refresh token. */
export interface AccessTokenReply {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
}

/**
 * The session an app starts for the user at the code exchange (API.md section 18): a refresh
 * token only when the app was granted `offline_access`. Without one, nothing can renew the
 * session, so it lives as long as its access token (unless `lifetimeSeconds` says otherwise) and
 * leaves the user's session list when that token expires.
 */
export async function openAppSession(
  db: Kysely<Database>,
  issuer: TokenIssuer,
  userId: string,
  client: ClientDetails,
  start: SessionStart,
  app: AppGrant,
  options: SessionOptions & { offline: boolean },
): Promise<{ session: SessionRow; access: AccessTokenReply; refreshToken: string | undefined }> {
  if (options.offline) {
    const { session, pair } = await openSession(db, issuer, userId, client, start, app, options);
    const { refresh_token: refreshToken, ...access } = pair;
    return { session, access, refreshToken };
  }
  const session = await insertNewSession(db, issuer, userId, client, start, app, { lifetimeSeconds: issuer.accessTokenTtlSeconds, ...options });
  const { refresh_token: _none, ...access } = tokenPair(issuer, userId, session, '');
  return { session, access, refreshToken: undefined };
}

async function insertNewSession(
  db: Kysely<Database>,
  issuer: TokenIssuer,
  userId: string,
  client: ClientDetails,
  start: SessionStart,
  app: AppGrant | undefined,
  options: SessionOptions,
): Promise<SessionRow> {
  const now = new Date();
  const authTime = options.authTime ?? now;
  const expiresAt = new Date(now.getTime() + (options.lifetimeSeconds ?? issuer.refreshTokenTtlSeconds) * 1000);
  return insertSession(db, {
    id: randomUUID(),
    user_id: userId,
    created_at: now,
    last_used_at: now,
    expires_at: expiresAt,
    user_agent: client.userAgent?.slice(0, 500) ?? null,
    ip: client.ip,
    amr: start.amr,
    auth_time: authTime,
    mfa_verified_at: (start.amr as string[]).includes('mfa') ? authTime : null,
    client_id: app?.clientId ?? null,
    scopes: app ? [...app.scopes] : null,
    signin_session_id: options.signinSessionId ?? null,
    browser_secret_hash: options.browserSecretHash ?? null,
  });
}
