import { randomUUID } from 'node:crypto';
import { createDecoder, createSigner, createVerifier } from 'fast-jwt';
import type { Config } from '../config.js';
import { CANONICAL_UUID } from '../http/common-schemas.js';
import type { KeyRing } from './key-ring.js';
import { VerifiedTokens } from './verified-tokens.js';

/** A user's access token: it names the session it belongs to, which ends it when it ends. */
export interface UserTokenClaims {
  sub: string;
  sid: string;
  /** How the session started (RFC 8176), kept across refreshes. */
  amr?: string[];
  /** When the user authenticated to start the session (seconds), kept across refreshes. */
  auth_time?: number;
  /** An app's token (API.md section 18): the app that started the session for the user. */
  client_id?: string;
  /** An app's token: the scopes it may use, space-separated. */
  scope?: string;
  jti: string;
  iat: number;
  exp: number;
}

/** The app a user's session was started by, and the scopes its tokens carry. */
export interface AppGrant {
  clientId: string;
  scopes: readonly string[];
}

/** An API client's access token (the client credentials grant): no session, the scopes granted. */
export interface ClientTokenClaims {
  sub: string;
  client_id: string;
  /** The granted scopes, space-separated. */
  scope: string;
  /**
   * The client's token generation when the token was issued: it counts while the client still
   * has it (disabling a client moves it on). Absent from tokens issued before it existed: 0.
   */
  client_generation?: number;
  jti: string;
  iat: number;
  exp: number;
}

export type AccessTokenClaims = UserTokenClaims | ClientTokenClaims;

/** A client's own token names no session; a user's token (an app's too) always does. */
export const isClientToken = (claims: AccessTokenClaims): claims is ClientTokenClaims => !('sid' in claims);

export interface TokenIssuer {
  readonly accessTokenTtlSeconds: number;
  readonly refreshTokenTtlSeconds: number;
  /** How long a spent refresh token still gets a pair (a client refreshing twice at once). */
  readonly refreshReuseIntervalSeconds: number;
  /** A user's token; with `app`, an app's token for the user, carrying its `client_id` and `scope`. */
  signAccessToken(userId: string, sessionId: string, authentication: { amr: string[]; authTime: Date }, app?: AppGrant): string;
  /** A token for an API client, with the scopes granted (space-separated in `scope`) and the client's token generation. */
  signClientToken(clientId: string, scopes: readonly string[], generation: number): string;
  /** The claims of a valid token, or undefined for any invalid one. */
  verifyAccessToken(token: string): Promise<AccessTokenClaims | undefined>;
}

const TOKEN_TYPE = 'at+jwt';
// `sid` (a user's) or `client_id` and `scope` (a client's) are required by kind, in checkedClaims.
const REQUIRED_CLAIMS = ['sub', 'exp', 'iat', 'jti', 'iss', 'aud'];
// RFC 8725: a token issued "in the future" beyond clock drift was not issued by us.
const MAX_CLOCK_SKEW_MS = 60_000;
const decodeHeader = createDecoder({ complete: true });

const isUuid = (value: unknown) => typeof value === 'string' && CANONICAL_UUID.test(value);

/**
 * A user's token names a session (an app's token also the app and its scopes); a client's names
 * itself and its scopes, and no session.
 */
function checkedClaims(claims: Record<string, unknown>): AccessTokenClaims | undefined {
  if (!isUuid(claims.sub)) return undefined;
  if (!Number.isFinite(claims.iat) || (claims.iat as number) * 1000 > Date.now() + MAX_CLOCK_SKEW_MS) return undefined;
  if ('sid' in claims) {
    if (!isUuid(claims.sid)) return undefined;
    if (('client_id' in claims || 'scope' in claims) && !(isUuid(claims.client_id) && typeof claims.scope === 'string')) return undefined;
    return claims as unknown as UserTokenClaims;
  }
  if ('client_id' in claims) {
    if (claims.client_id !== claims.sub || typeof claims.scope !== 'string') return undefined;
    if ('client_generation' in claims && !(Number.isSafeInteger(claims.client_generation) && (claims.client_generation as number) >= 0)) return undefined;
    return claims as unknown as ClientTokenClaims;
  }
  return undefined;
}

/**
 * Built once from the configuration: Ed25519 keys from the database (`alg: EdDSA`, `kid`),
 * or, with JWT_SECRET, HS256 with that secret. Either way one algorithm is accepted, with
 * `typ: at+jwt` and checked iss, aud, exp. The RSA keys sign ID tokens only: the ring has no
 * access-token verifier for them, nor, with JWT_SECRET, for any key.
 */
export function createTokenIssuer(config: Config, ring: KeyRing | undefined): TokenIssuer {
  const rules = { issuer: config.jwtIssuer, audience: config.jwtAudience };
  const base = {
    accessTokenTtlSeconds: config.accessTokenTtlSeconds,
    refreshTokenTtlSeconds: config.refreshTokenTtlSeconds,
    refreshReuseIntervalSeconds: config.refreshReuseIntervalSeconds,
  };
  const claimsFor = (userId: string, sessionId: string, authentication: { amr: string[]; authTime: Date }, app: AppGrant | undefined) => ({
    sub: userId,
    sid: sessionId,
    amr: authentication.amr,
    auth_time: Math.floor(authentication.authTime.getTime() / 1000),
    ...(app && { client_id: app.clientId, scope: app.scopes.join(' ') }),
    jti: randomUUID(),
  });
  const clientClaimsFor = (clientId: string, scopes: readonly string[], generation: number) => ({
    sub: clientId,
    client_id: clientId,
    scope: scopes.join(' '),
    client_generation: generation,
    jti: randomUUID(),
  });

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
      signAccessToken: (userId, sessionId, authentication, app) => sign(claimsFor(userId, sessionId, authentication, app)),
      signClientToken: (clientId, scopes, generation) => sign(clientClaimsFor(clientId, scopes, generation)),
      verifyAccessToken: async (token) => {
        const known = verified.get(token);
        if (known) return known;
        try {
          const claims = checkedClaims(verify(token) as Record<string, unknown>);
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
    signAccessToken: (userId, sessionId, authentication, app) => ring.sign(claimsFor(userId, sessionId, authentication, app)),
    signClientToken: (clientId, scopes, generation) => ring.sign(clientClaimsFor(clientId, scopes, generation)),
    verifyAccessToken: async (token) => {
      const known = verified.get(token);
      if (known) return known;
      try {
        const { header } = decodeHeader(token) as { header: { alg?: unknown; kid?: unknown } };
        if (header.alg !== 'EdDSA' || typeof header.kid !== 'string') return undefined;
        const verify = await ring.verifierFor(header.kid);
        const claims = verify && checkedClaims(verify(token));
        return claims && verified.remember(token, claims, header.kid);
      } catch {
        return undefined;
      }
    },
  };
}

export const ACCESS_TOKEN_RULES = { typ: TOKEN_TYPE, requiredClaims: REQUIRED_CLAIMS };
