import type { CallerKey } from './caller-query.js';
import type { KnownCallers } from './known-callers.js';
import { isClientToken, type AccessTokenClaims } from './token-issuer.js';

/** How many secrets' keys are kept at the most. */
export const MOST_SECRETS_KEPT = 10_000;

/**
 * One key object for each credential, given out again for as long as the credential is in use:
 * known-callers.ts keeps callers under their key object. An access token's claims are one object
 * while the token is remembered (verified-tokens.ts); a secret's key is kept under its hash.
 */
export class CallerKeys {
  readonly #ofClaims = new WeakMap<AccessTokenClaims, CallerKey>();
  readonly #ofSecretHashes = new Map<string, CallerKey>();

  constructor(private readonly knownCallers: KnownCallers) {}

  ofClaims(claims: AccessTokenClaims): CallerKey {
    let key = this.#ofClaims.get(claims);
    if (!key) {
      key = isClientToken(claims)
        ? { kind: 'client-token', clientId: claims.client_id, scopes: claims.scope.split(' ').filter(Boolean), generation: claims.client_generation ?? 0 }
        : { kind: 'user', userId: claims.sub, sessionId: claims.sid };
      this.#ofClaims.set(claims, key);
    }
    return key;
  }

  ofSecretHash(secretHash: string): CallerKey {
    let key = this.#ofSecretHashes.get(secretHash);
    if (!key) {
      // Any well-formed secret gets a key before the database has said it names a client: past
      // the bound, the keys of no known caller (unknown secrets among them) go, then, if that was
      // not enough, all; secrets in use come back with their next request.
      if (this.#ofSecretHashes.size >= MOST_SECRETS_KEPT) {
        for (const [hash, kept] of this.#ofSecretHashes) if (!this.knownCallers.has(kept)) this.#ofSecretHashes.delete(hash);
        if (this.#ofSecretHashes.size >= MOST_SECRETS_KEPT) this.#ofSecretHashes.clear();
      }
      key = { kind: 'client-secret', secretHash };
      this.#ofSecretHashes.set(secretHash, key);
    }
    return key;
  }
}
