import { createPublicKey } from 'node:crypto';
import { createSigner, createVerifier } from 'fast-jwt';
import type { Kysely } from 'kysely';
import type { Database, SigningAlgorithm, SigningKeyRow } from '../db/tables.js';
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
 * token costs no round trip. Every key signs ID tokens (the active one of each algorithm) and is
 * published in the JWKS. Access tokens are another matter: given their rules, the Ed25519 keys
 * sign and verify them, each verifying only EdDSA with its own public key; an RSA key never
 * does. Without those rules (JWT_SECRET: access tokens are HS256) no key touches an access token.
 */
export class KeyRing {
  private signers = new Map<string, Sign>();
  private verifiers = new Map<string, Verify>();
  private activeKid: string | undefined;
  private idTokenSigners = new Map<string, Sign>();
  private activeIdTokenKids = new Map<SigningAlgorithm, string>();
  private publicKeys: Record<string, string>[] = [];
  private publicKeysByKid = new Map<string, { alg: SigningAlgorithm; pem: string }>();
  private idTokenHintVerifiers = new Map<string, Verify>();
  private readonly unknownKidsLookedUp = new Map<string, number>();
  private reloading: Promise<void> | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly secrets: SecretsAtRest,
    /** Undefined with JWT_SECRET: then the keys sign ID tokens only. */
    private readonly accessTokenRules: TokenRules | undefined,
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
    const idTokenSigners = new Map<string, Sign>();
    const activeIdTokenKids = new Map<SigningAlgorithm, string>();
    const rules = this.accessTokenRules;
    for (const key of keys) {
      if (key.status === 'active') {
        activeIdTokenKids.set(key.alg, key.kid);
        idTokenSigners.set(key.kid, this.idTokenSigners.get(key.kid) ?? this.idTokenSignerOf(key));
      }
      if (!rules || key.alg !== 'EdDSA') continue;
      verifiers.set(
        key.kid,
        this.verifiers.get(key.kid) ??
          createVerifier({
            key: createPublicKey({ key: key.public_jwk, format: 'jwk' }).export({ format: 'pem', type: 'spki' }).toString(),
            algorithms: ['EdDSA'],
            allowedIss: rules.issuer,
            allowedAud: rules.audience,
            checkTyp: rules.typ,
            requiredClaims: rules.requiredClaims,
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
              iss: rules.issuer,
              aud: rules.audience,
              expiresIn: rules.ttlSeconds * 1000,
              header: { alg: 'EdDSA', typ: rules.typ, kid: key.kid },
            }),
        );
      }
    }
    this.verifiers = verifiers;
    this.signers = signers;
    this.activeKid = rules ? keys.find((key) => key.status === 'active' && key.alg === 'EdDSA')?.kid : undefined;
    this.idTokenSigners = idTokenSigners;
    this.activeIdTokenKids = activeIdTokenKids;
    this.publicKeys = keys.map((key) => key.public_jwk);
    this.publicKeysByKid = new Map(keys.map((key) => [key.kid, { alg: key.alg, pem: createPublicKey({ key: key.public_jwk, format: 'jwk' }).export({ format: 'pem', type: 'spki' }).toString() }]));
    this.idTokenHintVerifiers = new Map([...this.idTokenHintVerifiers].filter(([kid]) => this.publicKeysByKid.has(kid)));
  }

  /** An ID token's signer: the claims are all the caller's (iss, aud, exp too); the header `typ: JWT`. */
  private idTokenSignerOf(key: SigningKeyRow): Sign {
    return createSigner({ key: this.secrets.open(key.private_pem), algorithm: key.alg, kid: key.kid, header: { alg: key.alg, typ: 'JWT', kid: key.kid } });
  }

  /** Signs an access token with the active Ed25519 key. */
  sign(payload: Record<string, unknown>): string {
    const sign = this.activeKid ? this.signers.get(this.activeKid) : undefined;
    if (!sign) throw new Error('no active signing key for access tokens is loaded');
    return sign(payload);
  }

  /** Signs an ID token with the active key of the algorithm (id-token-signer.ts). */
  signIdToken(claims: Record<string, unknown>, alg: SigningAlgorithm): string {
    const kid = this.activeIdTokenKids.get(alg);
    const sign = kid ? this.idTokenSigners.get(kid) : undefined;
    if (!sign) throw new Error(`no active ${alg} signing key is loaded`);
    return sign(claims);
  }

  /**
   * The claims of an ID token this service signed with a key still live, whatever its `exp`
   * (OpenID Connect RP-Initiated Logout: an app logs a user out with the ID token it holds, which
   * has often expired by then); undefined for anything else.
   */
  verifyIdTokenHint(token: string, issuer: string, kid: string): Record<string, unknown> | undefined {
    const key = this.publicKeysByKid.get(kid);
    if (!key) return undefined;
    let verify = this.idTokenHintVerifiers.get(kid);
    if (!verify) {
      verify = createVerifier({ key: key.pem, algorithms: [key.alg], allowedIss: issuer, checkTyp: 'JWT', ignoreExpiration: true, requiredClaims: ['sub', 'aud', 'sid'] });
      this.idTokenHintVerifiers.set(kid, verify);
    }
    try {
      return verify(token);
    } catch {
      return undefined;
    }
  }

  /** Whether the key `kid` still verifies access tokens (active or retiring). */
  isLive(kid: string): boolean {
    return this.verifiers.has(kid);
  }

  /** The verifier of access tokens signed by `kid`: only an Ed25519 key's, and none with JWT_SECRET. */
  async verifierFor(kid: string): Promise<Verify | undefined> {
    if (!this.accessTokenRules) return undefined;
    if (this.verifiers.has(kid)) return this.verifiers.get(kid);
    const lookedUp = this.unknownKidsLookedUp.get(kid);
    if (lookedUp === undefined || Date.now() - lookedUp > UNKNOWN_KID_RELOAD_MS) {
      if (this.unknownKidsLookedUp.size >= MAX_REMEMBERED_UNKNOWN_KIDS) this.unknownKidsLookedUp.clear();
      this.unknownKidsLookedUp.set(kid, Date.now());
      await this.reload();
    }
    return this.verifiers.get(kid);
  }

  /** The public keys of the JWKS: the active one of each algorithm and the retiring ones. */
  jwks(): { keys: Record<string, string>[] } {
    return { keys: this.publicKeys };
  }
}
