import { randomUUID } from 'node:crypto';
import { createSigner, createVerifier } from 'fast-jwt';
import type { Config } from '../config.js';
import { CANONICAL_UUID } from '../http/common-schemas.js';

export interface AccessTokenClaims {
  sub: string;
  /** The session the token belongs to: when it ends, the token stops working. */
  sid: string;
  jti: string;
  iat: number;
  exp: number;
}

export interface TokenIssuer {
  readonly accessTokenTtlSeconds: number;
  readonly refreshTokenTtlSeconds: number;
  /** How long a spent refresh token still gets a pair (a client refreshing twice at once). */
  readonly refreshReuseIntervalSeconds: number;
  signAccessToken(userId: string, sessionId: string): string;
  /** The claims of a valid token, or undefined for any invalid one. */
  verifyAccessToken(token: string): AccessTokenClaims | undefined;
}

const ALGORITHM = 'HS256';
const TOKEN_TYPE = 'at+jwt';
// RFC 8725: a token issued "in the future" beyond clock drift was not issued by us.
const MAX_CLOCK_SKEW_MS = 60_000;

/** Built once from the configuration: one pinned algorithm, `typ: at+jwt`, checked iss/aud/exp. */
export function createTokenIssuer(config: Config): TokenIssuer {
  const sign = createSigner({
    key: config.jwtSecret,
    algorithm: ALGORITHM,
    iss: config.jwtIssuer,
    aud: config.jwtAudience,
    expiresIn: config.accessTokenTtlSeconds * 1000,
    header: { alg: ALGORITHM, typ: TOKEN_TYPE },
  });
  const verify = createVerifier({
    key: config.jwtSecret,
    algorithms: [ALGORITHM],
    allowedIss: config.jwtIssuer,
    allowedAud: config.jwtAudience,
    checkTyp: TOKEN_TYPE,
    requiredClaims: ['sub', 'sid', 'exp', 'iat', 'jti', 'iss', 'aud'],
    cache: 10000,
  });
  return {
    accessTokenTtlSeconds: config.accessTokenTtlSeconds,
    refreshTokenTtlSeconds: config.refreshTokenTtlSeconds,
    refreshReuseIntervalSeconds: config.refreshReuseIntervalSeconds,
    signAccessToken: (userId, sessionId) => sign({ sub: userId, sid: sessionId, jti: randomUUID() }),
    verifyAccessToken: (token) => {
      try {
        const claims = verify(token) as AccessTokenClaims;
        if (typeof claims.sub !== 'string' || !CANONICAL_UUID.test(claims.sub) || typeof claims.sid !== 'string' || !CANONICAL_UUID.test(claims.sid)) return undefined;
        if (!Number.isFinite(claims.iat) || claims.iat * 1000 > Date.now() + MAX_CLOCK_SKEW_MS) return undefined;
        return claims;
      } catch {
        return undefined;
      }
    },
  };
}
