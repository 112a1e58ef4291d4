import type { Kysely, Transaction } from 'kysely';
import type { Database, SigningAlgorithm, SigningKeyRow } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { isSealed, SealError, type SecretsAtRest } from './secrets-at-rest.js';
import { findActiveSigningKeys, insertSigningKey, listStoredSigningKeysForUpdate, lockSigningKeys, retireSigningKey, storePrivateKey } from './signing-key-repository.js';

/** For the rotation of the signing keys (auth/signing-key-rotation.ts): the active keys, and the lock a rotation takes. */
export { findActiveSigningKeys, lockSigningKeys } from './signing-key-repository.js';

/**
 * Every algorithm has its active key, and they are created and rotated together: Ed25519 signs
 * access tokens (without JWT_SECRET) and ID tokens, RSA only ID tokens (API.md section 18).
 */
export const SIGNING_ALGORITHMS: readonly SigningAlgorithm[] = ['EdDSA', 'RS256'];

// A retiring key verifies tokens until the last one it signed has expired, and a margin.
const RETIREMENT_MARGIN_MS = 5 * 60 * 1000;

export interface RotationSettings {
  secrets: SecretsAtRest;
  accessTokenTtlSeconds: number;
}

/**
 * At start: the first key of each algorithm, created once however many instances start together; the stored
 * keys sealed with SIGNING_KEY_ENCRYPTION_KEY when it is set (those an earlier start stored
 * plain included). A key that the configured key cannot open, or a sealed key without one,
 * stops the start with one line that says which.
 */
export function ensureActiveSigningKeys(db: Kysely<Database>, secrets: SecretsAtRest): Promise<void> {
  return inTransaction(db, async (trx) => {
    await lockSigningKeys(trx);
    for (const key of await listStoredSigningKeysForUpdate(trx)) {
      let privatePem: string;
      try {
        privatePem = secrets.open(key.private_pem);
      } catch (error) {
        if (!(error instanceof SealError)) throw error;
        throw new Error(
          secrets.encrypts
            ? 'SIGNING_KEY_ENCRYPTION_KEY does not decrypt the stored signing keys: start with the key they were encrypted with'
            : 'the stored signing keys are encrypted: set SIGNING_KEY_ENCRYPTION_KEY to the key they were encrypted with',
        );
      }
      if (secrets.encrypts && !isSealed(key.private_pem)) await storePrivateKey(trx, key.kid, secrets.seal(privatePem));
    }
    // A database from before RSA keys has its Ed25519 key: only the RSA one is made.
    const active = new Set((await findActiveSigningKeys(trx)).map((key) => key.alg));
    for (const alg of SIGNING_ALGORITHMS) if (!active.has(alg)) await insertSigningKey(trx, secrets, alg);
  });
}

export interface KeyReplacement {
  alg: SigningAlgorithm;
  previous: SigningKeyRow | undefined;
  next: SigningKeyRow;
}

/**
 * A new active key of each algorithm, under the lock that orders rotations (the caller took it);
 * the old ones keep verifying their tokens until they have all expired (an ID token lives as long
 * as an access token). Returns each pair, in SIGNING_ALGORITHMS' order, for the rotation's events.
 */
export async function replaceActiveKeys(trx: Transaction<Database>, settings: RotationSettings): Promise<KeyReplacement[]> {
  const active = await findActiveSigningKeys(trx);
  const retiresAt = new Date(Date.now() + settings.accessTokenTtlSeconds * 1000 + RETIREMENT_MARGIN_MS);
  const replacements: KeyReplacement[] = [];
  for (const alg of SIGNING_ALGORITHMS) {
    const previous = active.find((key) => key.alg === alg);
    if (previous) await retireSigningKey(trx, previous.kid, retiresAt);
    replacements.push({ alg, previous, next: await insertSigningKey(trx, settings.secrets, alg) });
  }
  return replacements;
}
