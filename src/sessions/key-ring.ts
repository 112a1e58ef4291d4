import { createPublicKey } from 'node:crypto';
import { createSigner, createVerifier } from 'fast-jwt';
import type { Kysely } from 'kysely';
import type { Database, SigningKeyRow } from '../db/tables.js';
import type { SecretsAtRest } from './secrets-at-rest.js';
import { listLiveSigningKeys } from './signing-key-repository.js';

type Sign = (payload: Record<string, unknown>) => string;
type Verify = (token: string) => Record<string, unknown>;

export interface TokenRules {
  issuer: string;
  audience: string;
  typ: string;
  ttlSeconds: number;
  requiredClaims: string[];
}

// A kid nobody here knows yet may be a key another instance just created: look again, but for
// each kid at most this often, so a forged kid repeated cannot make every request a read.
const UNKNOWN_KID_RELOAD_MS = 1000;
const MAX_REMEMBERED_UNKNOWN_KIDS = 1000;

/**
 * The signing keys in memory, refreshed from the database in the background, so verifying a
 * token costs no round trip. Each key verifies only EdDSA, with its own public key.
 */
export class KeyRing {
  private signers = new Map<string, Sign>();
  private verifiers = new Map<string, Verify>();
  private activeKid: string | undefined;
  private publicKeys: Record<string, string>[] = [];
  private readonly unknownKidsLookedUp = new Map<string, number>();
  private reloading: Promise<void> | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly rules: TokenRules,
    private readonly secrets: SecretsAtRest,
  ) {}

  async reload(): Promise<void> {
    this.reloading ??= listLiveSigningKeys(this.db)
      .then((keys) => this.install(keys))
      .finally(() => {
        this.reloading = undefined;
      });
    return this.reloading;
  }

  private install(keys: SigningKeyRow[]): void {
    const verifiers = new Map<string, Verify>();
    const signers = new Map<string, Sign>();
    for (const key of keys) {
      verifiers.set(
        key.kid,
        this.verifiers.get(key.kid) ??
          createVerifier({
            key: createPublicKey({ key: key.public_jwk, format: 'jwk' }).export({ format: 'pem', type: 'spki' }).toString(),
            algorithms: ['EdDSA'],
            allowedIss: this.rules.issuer,
            allowedAud: this.rules.audience,
            checkTyp: this.rules.typ,
            requiredClaims: this.rules.requiredClaims,
          }),
      );
      if (key.status === 'active') {
        signers.set(
          key.kid,
          this.signers.get(key.kid) ??
            createSigner({
              key: this.secrets.open(key.private_pem),
              algorithm: 'EdDSA',
              kid: key.kid,
              iss: this.rules.issuer,
              aud: this.rules.audience,
              expiresIn: this.rules.ttlSeconds * 1000,
              header: { alg: 'EdDSA', typ: this.rules.typ, kid: key.kid },
            }),
        );
      }
    }
    this.verifiers = verifiers;
    this.signers = signers;
    this.activeKid = keys.find((key) => key.status === 'active')?.kid;
    this.publicKeys = keys.map((key) => key.public_jwk);
  }

  sign(payload: Record<string, unknown>): string {
    const sign = this.activeKid ? this.signers.get(this.activeKid) : undefined;
    if (!sign) throw new Error('no active signing key is loaded');
    return sign(payload);
  }

  /** Whether the key `kid` still verifies tokens (active or retiring). */
  isLive(kid: string): boolean {
    return this.verifiers.has(kid);
  }

  async verifierFor(kid: string): Promise<Verify | undefined> {
    if (this.verifiers.has(kid)) return this.verifiers.get(kid);
    const lookedUp = this.unknownKidsLookedUp.get(kid);
    if (lookedUp === undefined || Date.now() - lookedUp > UNKNOWN_KID_RELOAD_MS) {
      if (this.unknownKidsLookedUp.size >= MAX_REMEMBERED_UNKNOWN_KIDS) this.unknownKidsLookedUp.clear();
      this.unknownKidsLookedUp.set(kid, Date.now());
      await this.reload();
    }
    return this.verifiers.get(kid);
  }

  /** The public keys of the JWKS: the active one and the retiring ones. */
  jwks(): { keys: Record<string, string>[] } {
    return { keys: this.publicKeys };
  }
}
