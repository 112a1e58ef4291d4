import type { Kysely, Transaction } from 'kysely';
import type { Database, SigningKeyRow } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { isSealed, SealError, type SecretsAtRest } from './secrets-at-rest.js';
import { findActiveSigningKey, insertSigningKey, listStoredSigningKeysForUpdate, lockSigningKeys, retireSigningKey, storePrivateKey } from './signing-key-repository.js';

/** For the rotation of the signing keys (auth/signing-key-rotation.ts): the active key, and the lock a rotation takes. */
export { findActiveSigningKey, lockSigningKeys } from './signing-key-repository.js';

// A retiring key verifies tokens until the last one it signed has expired, and a margin.
const RETIREMENT_MARGIN_MS = 5 * 60 * 1000;

export interface RotationSettings {
  secrets: SecretsAtRest;
  accessTokenTtlSeconds: number;
}

/**
 * At start: the first key, created once however many instances start together; the stored
 * keys sealed with SIGNING_KEY_ENCRYPTION_KEY when it is set (those an earlier start stored
 * plain included). A key that the configured key cannot open, or a sealed key without one,
 * stops the start with one line that says which.
 */
export function ensureActiveSigningKey(db: Kysely<Database>, secrets: SecretsAtRest): Promise<void> {
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
    if (!(await findActiveSigningKey(trx))) await insertSigningKey(trx, secrets);
  });
}

/**
 * A new active key, under the lock that orders rotations (the caller took it); the old one keeps
 * verifying its tokens until they have all expired. Returns both, for the rotation's event.
 */
export async function replaceActiveKey(trx: Transaction<Database>, settings: RotationSettings): Promise<{ previous: SigningKeyRow | undefined; next: SigningKeyRow }> {
  const previous = await findActiveSigningKey(trx);
  if (previous) await retireSigningKey(trx, previous.kid, new Date(Date.now() + settings.accessTokenTtlSeconds * 1000 + RETIREMENT_MARGIN_MS));
  return { previous, next: await insertSigningKey(trx, settings.secrets) };
}
