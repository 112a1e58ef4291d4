import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database, SigningKeyRow } from '../db/tables.js';
import type { SecretsAtRest } from './secrets-at-rest.js';

/** The keys that verify tokens now: the active one and those still retiring, newest first. */
export function liveSigningKeys(db: Kysely<Database>) {
  return db
    .selectFrom('signing_keys')
    .selectAll()
    .where((eb) => eb.or([eb('retires_at', 'is', null), eb('retires_at', '>', new Date())]))
    .orderBy('created_at', 'desc');
}

export function listLiveSigningKeys(db: Kysely<Database>): Promise<SigningKeyRow[]> {
  return liveSigningKeys(db).execute();
}

export function findActiveSigningKey(db: Kysely<Database>): Promise<SigningKeyRow | undefined> {
  return db.selectFrom('signing_keys').selectAll().where('status', '=', 'active').forUpdate().executeTakeFirst();
}

/** A new Ed25519 key, its private half sealed as `secrets` says. */
export function insertSigningKey(db: Kysely<Database>, secrets: SecretsAtRest): Promise<SigningKeyRow> {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const kid = randomUUID();
  return db
    .insertInto('signing_keys')
    .values({
      kid,
      alg: 'EdDSA',
      public_jwk: JSON.stringify({ ...publicKey.export({ format: 'jwk' }), kid, alg: 'EdDSA', use: 'sig' }),
      private_pem: secrets.seal(privateKey.export({ format: 'pem', type: 'pkcs8' }).toString()),
      status: 'active',
      created_at: new Date(),
      retires_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Every key still stored, private halves included: for sealing them at start. */
export function listStoredSigningKeysForUpdate(db: Kysely<Database>): Promise<SigningKeyRow[]> {
  return db.selectFrom('signing_keys').selectAll().orderBy('kid').forUpdate().execute();
}

export async function storePrivateKey(db: Kysely<Database>, kid: string, privatePem: string): Promise<void> {
  await db.updateTable('signing_keys').set({ private_pem: privatePem }).where('kid', '=', kid).execute();
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
  await sql`select pg_advisory_xact_lock(${SIGNING_KEY_LOCK})`.execute(db);
}
