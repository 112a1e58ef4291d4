import { createHash } from 'node:crypto';
import type { IdTokenAlgorithm, UserRow } from '../db/tables.js';
import type { IdTokenSigner } from '../sessions/id-token-signer.js';
import { claimsForScopes } from './user-claims.js';

/**
 * OpenID Connect Core §3.1.3.6: the left half of the hash of the access token's ASCII, base64url.
 * The hash is the one of the signature's algorithm: SHA-256 for RS256, and SHA-512 for EdDSA over
 * Ed25519 (the hash Ed25519 itself uses), as relying parties compute it (oauth4webapi, under
 * openid-client 6; node-oidc-provider's oidc-token-hash).
 */
export function accessTokenHash(accessToken: string, alg: IdTokenAlgorithm): string {
  const digest = createHash(alg === 'EdDSA' ? 'sha512' : 'sha256').update(accessToken, 'ascii').digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

/** What an ID token is about: the user, the app's session, and how the user signed in. */
export interface IdTokenSubject {
  user: Pick<UserRow, 'id' | 'email' | 'email_verified' | 'name' | 'phone' | 'updated_at'>;
  session: { id: string; auth_time: Date; amr: string[] };
  clientId: string;
  /** The scopes granted to the app: they choose the user's claims. */
  scopes: readonly string[];
  /** The authorization request's, at the code exchange only. */
  nonce: string | null;
  /** The access token issued beside it (`at_hash`). */
  accessToken: string;
}

/**
 * The ID token of API.md section 18, signed as the app asked (`id_token_signed_response_alg`):
 * `iss`, `sub`, `aud` (the app), `exp` (ACCESS_TOKEN_TTL), `iat`, `auth_time` (the sign-in's),
 * `nonce` when the request sent one, `sid` (the app's session, as in the access token), `amr`,
 * `at_hash`, and the claims of the granted scopes, as userinfo answers them.
 */
export function signIdToken(signer: IdTokenSigner, alg: IdTokenAlgorithm, settings: { issuer: string; ttlSeconds: number }, subject: IdTokenSubject): string {
  const now = Math.floor(Date.now() / 1000);
  const claims = {
    ...claimsForScopes(subject.user, subject.scopes),
    iss: settings.issuer,
    sub: subject.user.id,
    aud: subject.clientId,
    exp: now + settings.ttlSeconds,
    iat: now,
    auth_time: Math.floor(subject.session.auth_time.getTime() / 1000),
    ...(subject.nonce !== null && { nonce: subject.nonce }),
    sid: subject.session.id,
    amr: subject.session.amr,
    at_hash: accessTokenHash(subject.accessToken, alg),
  };
  return signer.signIdToken(claims, alg);
}
