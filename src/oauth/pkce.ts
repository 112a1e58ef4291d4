import { createHash, timingSafeEqual } from 'node:crypto';

/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/** Whether a `code_verifier` proves the S256 `code_challenge` a code was issued for (RFC 7636 §4.6). */
export function verifierMatches(verifier: string | undefined, challenge: string): boolean {
  if (verifier === undefined || !CODE_VERIFIER.test(verifier)) return false;
  const computed = Buffer.from(createHash('sha256').update(verifier, 'ascii').digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}
