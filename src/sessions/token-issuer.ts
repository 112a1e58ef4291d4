import { randomUUID } from 'node:crypto';
import { createDecoder, createSigner, createVerifier } from 'fast-jwt';
import type { Config } from '../config.js';
import { CANONICAL_UUID } from '../http/common-schemas.js';
import type { KeyRing } from './key-ring.js';
import { VerifiedTokens } from './verified-tokens.js';

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
  verifyAccessToken(token: string): Promise<AccessTokenClaims | undefined>;
}

const TOKEN_TYPE = 'at+jwt';
const REQUIRED_CLAIMS = ['sub', 'sid', 'exp', 'iat', 'jti', 'iss', 'aud'];
// RFC 8725: a token issued "in the future" beyond clock drift was not issued by us.
const MAX_CLOCK_SKEW_MS = 60_000;
const decodeHeader = createDecoder({ complete: true });

function checkedClaims(claims: AccessTokenClaims): AccessTokenClaims | undefined {
  if (typeof claims.sub !== 'string' || !CANONICAL_UUID.test(claims.sub) || typeof claims.sid !== 'string' || !CANONICAL_UUID.test(claims.sid)) return undefined;
  if (!Number.isFinite(claims.iat) || claims.iat * 1000 > Date.now() + MAX_CLOCK_SKEW_MS) return undefined;
  return claims;
}

/**
 * Built once from the configuration: Ed25519 keys from the database (`alg: EdDSA`, `kid`),
 * or, with JWT_SECRET, HS256 with that secret. Either way one algorithm is accepted, with
 * `typ: at+jwt` and checked iss, aud, exp.
 */
export function createTokenIssuer(config: Config, ring: KeyRing | undefined): TokenIssuer {
  const rules = { issuer: config.jwtIssuer, audience: config.jwtAudience };
  const base = {
    accessTokenTtlSeconds: config.accessTokenTtlSeconds,
    refreshTokenTtlSeconds: config.refreshTokenTtlSeconds,
    refreshReuseIntervalSeconds: config.refreshReuseIntervalSeconds,
  };
  const claimsFor = (userId: string, sessionId: string) => ({ sub: userId, sid: sessionId, jti: randomUUID() });

  if (config.jwtSecret) {
    const sign = createSigner({
      key: config.jwtSecret,
      algorithm: 'HS256',
      iss: rules.issuer,
      aud: rules.audience,
      expiresIn: config.accessTokenTtlSeconds * 1000,
      header: { alg: 'HS256', typ: TOKEN_TYPE },
    });
    const verify = createVerifier({
      key: config.jwtSecret,
      algorithms: ['HS256'],
      allowedIss: rules.issuer,
      allowedAud: rules.audience,
      checkTyp: TOKEN_TYPE,
      requiredClaims: REQUIRED_CLAIMS,
    });
    const verified = new VerifiedTokens<AccessTokenClaims>();
    return {
      ...base,
      signAccessToken: (userId, sessionId) => sign(claimsFor(userId, sessionId)),
      verifyAccessToken: async (token) => {
        const known = verified.get(token);
        if (known) return known;
        try {
          const claims = checkedClaims(verify(token) as AccessTokenClaims);
          return claims && verified.remember(token, claims);
        } catch {
          return undefined;
        }
      },
    };
  }

  if (!ring) throw new Error('EdDSA tokens need the key ring');
  const verified = new VerifiedTokens<AccessTokenClaims>((kid) => ring.isLive(kid));
  return {
    ...base,
    signAccessToken: (userId, sessionId) => ring.sign(claimsFor(userId, sessionId)),
    verifyAccessToken: async (token) => {
      const known = verified.get(token);
      if (known) return known;
      try {
        const { header } = decodeHeader(token) as { header: { alg?: unknown; kid?: unknown } };
        if (header.alg !== 'EdDSA' || typeof header.kid !== 'string') return undefined;
        const verify = await ring.verifierFor(header.kid);
        const claims = verify && checkedClaims(verify(token) as unknown as AccessTokenClaims);
        return claims && verified.remember(token, claims, header.kid);
      } catch {
        return undefined;
      }
    },
  };
}

export const ACCESS_TOKEN_RULES = { typ: TOKEN_TYPE, requiredClaims: REQUIRED_CLAIMS };
