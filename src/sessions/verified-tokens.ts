const MOST_REMEMBERED = 10_000;

interface Verified<Claims> {
  claims: Claims;
  /** The signing key that verified it; undefined with a shared secret. */
  kid: string | undefined;
}

/**
 * Access tokens already verified, under the token itself, until they expire: a client sends the
 * same token on request after request, and verifying it each time (or hashing it for
 * fast-jwt's cache key) showed in the profile. A token is taken from here only while the key
 * that verified it is still live, so retiring a key refuses its tokens at once. Whether the
 * session and the user still allow the request is asked of the database on every request.
 */
export class VerifiedTokens<Claims extends { exp: number }> {
  private readonly tokens = new Map<string, Verified<Claims>>();

  constructor(private readonly isLive: (kid: string) => boolean = () => true) {}

  get(token: string): Claims | undefined {
    const entry = this.tokens.get(token);
    if (!entry) return undefined;
    if (entry.claims.exp * 1000 <= Date.now() || (entry.kid !== undefined && !this.isLive(entry.kid))) {
      this.tokens.delete(token);
      return undefined;
    }
    return entry.claims;
  }

  remember(token: string, claims: Claims, kid?: string): Claims {
    // Past the bound the memory starts over; tokens in use come back on their next request.
    if (this.tokens.size >= MOST_REMEMBERED) this.tokens.clear();
    this.tokens.set(token, { claims, kid });
    return claims;
  }
}
