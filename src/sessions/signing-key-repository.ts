import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database, SigningKeyRow } from '../db/tables.js';

/** The keys that verify tokens now: the active one and those still retiring. */
export function listLiveSigningKeys(db: Kysely<Database>): Promise<SigningKeyRow[]> {
  return db
    .selectFrom('signing_keys')
    .selectAll()
    .where((eb) => eb.or([eb('retires_at', 'is', null), eb('retires_at', '>', new Date())]))
    .orderBy('created_at', 'desc')
    .execute();
}

export function findActiveSigningKey(db: Kysely<Database>): Promise<SigningKeyRow | undefined> {
  return db.selectFrom('signing_keys').selectAll().where('status', '=', 'active').forUpdate().executeTakeFirst();
}

export function insertSigningKey(db: Kysely<Database>): Promise<SigningKeyRow> {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const kid = randomUUID();
  return db
    .insertInto('signing_keys')
    .values({
      kid,
      alg: 'EdDSA',
      public_jwk: JSON.stringify({ ...publicKey.export({ format: 'jwk' }), kid, alg: 'EdDSA', use: 'sig' }),
      private_pem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
      status: 'active',
      created_at: new Date(),
      retires_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function retireSigningKey(db: Kysely<Database>, kid: string, retiresAt: Date): Promise<void> {
  await db.updateTable('signing_keys').set({ status: 'retiring', retires_at: retiresAt }).where('kid', '=', kid).execute();
}

export async function deleteRetiredSigningKeys(db: Kysely<Database>): Promise<number> {
  const result = await db.deleteFrom('signing_keys').where('retires_at', '<=', new Date()).executeTakeFirst();
  return Number(result.numDeletedRows);
}

// One instance at a time creates or rotates keys; any constant works, the same on every instance.
const SIGNING_KEY_LOCK = 720_431_120;

export async function lockSigningKeys(db: Kysely<Database>): Promise<void> {
  // A query of Kysely's own rather than raw text: over HTTP, a SELECT carries the caller check.
  await db.selectNoFrom(sql<unknown>`pg_advisory_xact_lock(${SIGNING_KEY_LOCK})`.as('locked')).execute();
}
