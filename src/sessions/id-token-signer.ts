import type { SigningAlgorithm } from '../db/tables.js';
import type { KeyRing } from './key-ring.js';

/** The algorithms an app may ask its ID tokens in (`id_token_signed_response_alg`). */
export type IdTokenAlgorithm = SigningAlgorithm;

/**
 * Signs ID tokens (API.md section 18, "Tokens") for the authorization server: a compact JWT,
 * header `typ: JWT` and the `kid` of the active key of the algorithm, whose public key the JWKS
 * publishes. The claims are the caller's, all of them (iss, sub, aud, exp, iat, nonce…): nothing
 * is added but what the caller leaves out of `iat`, which is now. A key keeps verifying in the
 * JWKS while it retires, so an ID token outlives a rotation as an access token does.
 */
export interface IdTokenSigner {
  signIdToken(claims: Record<string, unknown>, alg: IdTokenAlgorithm): string;
}

export function createIdTokenSigner(ring: KeyRing): IdTokenSigner {
  return { signIdToken: (claims, alg) => ring.signIdToken(claims, alg) };
}
