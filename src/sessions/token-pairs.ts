import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { insertRefreshToken } from './refresh-token-repository.js';
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

export async function issueTokenPair(
  db: Kysely<Database>,
  issuer: TokenIssuer,
  user: { id: string; session_version: number },
  familyId: string = randomUUID(),
): Promise<TokenPair> {
  const refreshToken = randomBytes(32).toString('base64url');
  await insertRefreshToken(db, {
    id: randomUUID(),
    userId: user.id,
    familyId,
    tokenHash: hashRefreshToken(refreshToken),
    expiresAt: new Date(Date.now() + issuer.refreshTokenTtlSeconds * 1000),
  });
  return {
    access_token: issuer.signAccessToken(user.id, user.session_version),
    token_type: 'Bearer',
    expires_in: issuer.accessTokenTtlSeconds,
    refresh_token: refreshToken,
  };
}
