import { generateKeyPair, randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { sql, type Kysely } from 'kysely';
import type { Database, SigningAlgorithm, SigningKeyRow } from '../db/tables.js';
import type { SecretsAtRest } from './secrets-at-rest.js';

/** The keys that verify tokens now: the active one and those still retiring, newest first. */
export function liveSigningKeys(db: Kysely<Database>) {
  return db
    .selectFrom('signing_keys')
    .selectAll()
    .where((eb) => eb.or([eb('retires_at', 'is', null), eb('retires_at', '>', new Date())]))
    .orderBy('created_at', 'desc')
    .orderBy('alg');
}

export function listLiveSigningKeys(db: Kysely<Database>): Promise<SigningKeyRow[]> {
  return liveSigningKeys(db).execute();
}

/** The active key of each algorithm (at most one each: the unique index says so). */
export function findActiveSigningKeys(db: Kysely<Database>): Promise<SigningKeyRow[]> {
  return db.selectFrom('signing_keys').selectAll().where('status', '=', 'active').orderBy('alg').forUpdate().execute();
}

const generate = promisify(generateKeyPair);

/**
 * A key pair of the algorithm: Ed25519, or RSA of 2048 bits (RFC 7518 asks at least that of
 * RS256). Generated off the event loop: an RSA key takes tens of milliseconds or more.
 */
const generatePair = (alg: SigningAlgorithm) => (alg === 'EdDSA' ? generate('ed25519') : generate('rsa', { modulusLength: 2048 }));

/** A new active key of the algorithm, its private half sealed as `secrets` says. */
export async function insertSigningKey(db: Kysely<Database>, secrets: SecretsAtRest, alg: SigningAlgorithm): Promise<SigningKeyRow> {
  const { publicKey, privateKey } = await generatePair(alg);
  const kid = randomUUID();
  return db
    .insertInto('signing_keys')
    .values({
      kid,
      alg,
      public_jwk: JSON.stringify({ ...publicKey.export({ format: 'jwk' }), kid, alg, use: 'sig' }),
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
