import { randomUUID } from 'node:crypto';
import { createSigner, createVerifier } from 'fast-jwt';
import type { Config } from '../config.js';
import { CANONICAL_UUID } from '../http/common-schemas.js';

export interface AccessTokenClaims {
  sub: string;
  /** The user's session version when the token was issued; a password change moves it on. */
  sv: number;
  jti: string;
  iat: number;
  exp: number;
}

export interface TokenIssuer {
  readonly accessTokenTtlSeconds: number;
  readonly refreshTokenTtlSeconds: number;
  signAccessToken(userId: string, sessionVersion: number): string;
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
    requiredClaims: ['sub', 'sv', 'exp', 'iat', 'jti', 'iss', 'aud'],
    cache: 10000,
  });
  return {
    accessTokenTtlSeconds: config.accessTokenTtlSeconds,
    refreshTokenTtlSeconds: config.refreshTokenTtlSeconds,
    signAccessToken: (userId, sessionVersion) => sign({ sub: userId, sv: sessionVersion, jti: randomUUID() }),
    verifyAccessToken: (token) => {
      try {
        const claims = verify(token) as AccessTokenClaims;
        if (typeof claims.sub !== 'string' || !CANONICAL_UUID.test(claims.sub) || !Number.isInteger(claims.sv)) return undefined;
        if (!Number.isFinite(claims.iat) || claims.iat * 1000 > Date.now() + MAX_CLOCK_SKEW_MS) return undefined;
        return claims;
      } catch {
        return undefined;
      }
    },
  };
}
