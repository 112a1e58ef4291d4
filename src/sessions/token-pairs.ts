import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { insertRefreshToken } from './refresh-token-repository.js';
import { extendSession, insertSession } from './session-repository.js';
import type { TokenIssuer } from './token-issuer.js';

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

/** A new pair in a session: the refresh token joins the session's family, the access token names it. */
export async function issueTokenPair(db: Kysely<Database>, issuer: TokenIssuer, userId: string, sessionId: string): Promise<TokenPair> {
  const refreshToken = randomBytes(32).toString('base64url');
  const expiresAt = new Date(Date.now() + issuer.refreshTokenTtlSeconds * 1000);
  await insertRefreshToken(db, { id: randomUUID(), userId, familyId: sessionId, tokenHash: hashRefreshToken(refreshToken), expiresAt });
  await extendSession(db, sessionId, expiresAt);
  return {
    access_token: issuer.signAccessToken(userId, sessionId),
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

/** A login: a new session and its first pair. */
export async function startSession(db: Kysely<Database>, issuer: TokenIssuer, userId: string, client: ClientDetails): Promise<TokenPair> {
  const now = new Date();
  const session = await insertSession(db, {
    id: randomUUID(),
    user_id: userId,
    created_at: now,
    last_used_at: now,
    expires_at: new Date(now.getTime() + issuer.refreshTokenTtlSeconds * 1000),
    user_agent: client.userAgent?.slice(0, 500) ?? null,
    ip: client.ip,
  });
  return issueTokenPair(db, issuer, userId, session.id);
}
