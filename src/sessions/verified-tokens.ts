const MOST_REMEMBERED = 10_000;

interface Verified<Claims> {
  /** The whole token: the map's key is only its signature. */
  token: string;
  claims: Claims;
  /** The signing key that verified it; undefined with a shared secret. */
  kid: string | undefined;
}

/**
 * The map's key for a token: its last segment, the signature (86 characters with EdDSA, 43 with
 * HS256). Hashing a string for a map lookup reads all of it, and a whole access token is some
 * 600 characters, hashed anew for every request since each arrives as a new string; a hit is then
 * checked against the whole token, so a signature sent with another header or payload is no hit.
 */
const signatureOf = (token: string) => token.slice(token.lastIndexOf('.') + 1);

/**
 * Access tokens already verified, until they expire: a client sends the same token on request
 * after request, and verifying it each time (or hashing it for fast-jwt's cache key) showed in
 * the profile. A token is taken from here only while the key that verified it is still live, so
 * retiring a key refuses its tokens at once. Whether the session and the user still allow the
 * request is the admission's to tell (admission.ts).
 */
export class VerifiedTokens<Claims extends { exp: number }> {
  private readonly tokens = new Map<string, Verified<Claims>>();

  constructor(private readonly isLive: (kid: string) => boolean = () => true) {}

  get(token: string): Claims | undefined {
    const signature = signatureOf(token);
    const entry = this.tokens.get(signature);
    if (!entry || entry.token !== token) return undefined;
    if (entry.claims.exp * 1000 <= Date.now() || (entry.kid !== undefined && !this.isLive(entry.kid))) {
      this.tokens.delete(signature);
      return undefined;
    }
    return entry.claims;
  }

  remember(token: string, claims: Claims, kid?: string): Claims {
    // Past the bound the memory starts over; tokens in use come back on their next request.
    if (this.tokens.size >= MOST_REMEMBERED) this.tokens.clear();
    this.tokens.set(signatureOf(token), { token, claims, kid });
    return claims;
  }
}
