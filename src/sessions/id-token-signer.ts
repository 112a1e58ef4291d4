import { createDecoder } from 'fast-jwt';
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
  /** An `id_token_hint`'s claims: an ID token of this issuer, signed by a live key, expired or not; undefined otherwise. */
  verifyIdTokenHint(token: string): Record<string, unknown> | undefined;
}

const decodeHeader = createDecoder({ complete: true });

export function createIdTokenSigner(ring: KeyRing, issuer: string): IdTokenSigner {
  return {
    signIdToken: (claims, alg) => ring.signIdToken(claims, alg),
    verifyIdTokenHint: (token) => {
      try {
        const { header } = decodeHeader(token) as { header: { kid?: unknown } };
        return typeof header.kid === 'string' ? ring.verifyIdTokenHint(token, issuer, header.kid) : undefined;
      } catch {
        return undefined;
      }
    },
  };
}
