import { randomUUID } from 'node:crypto';
import fastifyJwt, { type FastifyJWTOptions } from '@fastify/jwt';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';

export interface AccessTokenClaims {
  sub: string;
  /** The user's session version when the token was issued; a password change moves it on. */
  sv: number;
  jti: string;
  iat: number;
  exp: number;
}

const ALGORITHM = 'HS256';
const TOKEN_TYPE = 'at+jwt';

/** Registers @fastify/jwt with one pinned algorithm, `typ: at+jwt`, and checked iss/aud/exp. */
export async function registerAccessTokens(app: FastifyInstance, config: Config): Promise<void> {
  await app.register(fastifyJwt, {
    secret: config.jwtSecret,
    // `typ` is passed through to fast-jwt's signer; @fastify/jwt's types do not list it.
    sign: {
      algorithm: ALGORITHM,
      iss: config.jwtIssuer,
      aud: config.jwtAudience,
      expiresIn: config.accessTokenTtlSeconds,
      typ: TOKEN_TYPE,
    } as FastifyJWTOptions['sign'],
    verify: {
      algorithms: [ALGORITHM],
      allowedIss: config.jwtIssuer,
      allowedAud: config.jwtAudience,
      checkTyp: TOKEN_TYPE,
      requiredClaims: ['sub', 'sv', 'exp', 'iat', 'jti'],
      cache: 10000,
    },
  });
}

export function signAccessToken(app: FastifyInstance, userId: string, sessionVersion: number): string {
  return app.jwt.sign({ sub: userId, sv: sessionVersion, jti: randomUUID() });
}

/** Returns the claims of a valid token, or undefined for any invalid one. */
export function verifyAccessToken(app: FastifyInstance, token: string): AccessTokenClaims | undefined {
  try {
    const claims = app.jwt.verify<AccessTokenClaims>(token);
    if (typeof claims.sub !== 'string' || !Number.isInteger(claims.sv)) return undefined;
    return claims;
  } catch {
    return undefined;
  }
}
