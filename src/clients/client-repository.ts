import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import { countRows, keysetPage, type PageRequest } from '../db/list-queries.js';
import type { ApiClientRow, ApiClientSecretRow, Database } from '../db/tables.js';
import { callerRead } from '../sessions/caller-query.js';

/** A client that is not deleted, by id, beside the caller. */
export const clientById = callerRead<ApiClientRow, [string]>('clients.byId', (db, id) => db.selectFrom('api_clients').selectAll().where('id', '=', id).where('deleted_at', 'is', null));

export function clientsPage(db: Kysely<Database>, page: PageRequest) {
  return keysetPage(db.selectFrom('api_clients').selectAll().where('deleted_at', 'is', null), page, 'newest-first');
}

export function countClients(db: Kysely<Database>): Promise<number> {
  return countRows(db.selectFrom('api_clients').where('deleted_at', 'is', null));
}

export function lockClient(trx: Transaction<Database>, id: string): Promise<ApiClientRow | undefined> {
  return trx.selectFrom('api_clients').selectAll().where('id', '=', id).where('deleted_at', 'is', null).forUpdate().executeTakeFirst();
}

export function insertClient(trx: Transaction<Database>, client: Omit<ApiClientRow, 'version' | 'last_used_at' | 'token_generation' | 'deleted_at'>): Promise<ApiClientRow> {
  return trx.insertInto('api_clients').values(client).returningAll().executeTakeFirstOrThrow();
}

/** What a change may set of a client: everything but its type, which is set at creation only. */
type ClientSetting = 'name' | 'description' | 'scopes' | 'status' | 'rate_limit' | 'redirect_uris' | 'post_logout_redirect_uris' | 'first_party' | 'logo_uri' | 'id_token_signed_response_alg';

/** Applies a change and moves `version` on by one; the caller has locked the row. */
export function updateClient(
  trx: Transaction<Database>,
  id: string,
  change: Partial<Pick<ApiClientRow, ClientSetting | 'token_generation' | 'deleted_at'>>,
): Promise<ApiClientRow> {
  return trx
    .updateTable('api_clients')
    .set({ ...change, version: sql`version + 1`, updated_at: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The secrets of clients that are not deleted, newest first. */
export function secretsOfClients(db: Kysely<Database>, clientIds: string[]): Promise<ApiClientSecretRow[]> {
  if (clientIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('api_client_secrets')
    .selectAll()
    .where('client_id', 'in', clientIds)
    .where('deleted_at', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export function insertSecret(trx: Transaction<Database>, clientId: string, secret: { hash: string; prefix: string }): Promise<ApiClientSecretRow> {
  return trx
    .insertInto('api_client_secrets')
    .values({ id: randomUUID(), client_id: clientId, secret_hash: secret.hash, prefix: secret.prefix, created_at: new Date(), expires_at: null, last_used_at: null, deleted_at: null })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A roll with overlap: every other secret that would live longer expires `seconds` from now. */
export async function expireOtherSecrets(trx: Transaction<Database>, clientId: string, keptId: string, seconds: number): Promise<void> {
  const at = sql<Date>`now() + make_interval(secs => ${seconds})`;
  await trx
    .updateTable('api_client_secrets')
    .set({ expires_at: at })
    .where('client_id', '=', clientId)
    .where('id', '<>', keptId)
    .where('deleted_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', at)]))
    .execute();
}

/** Deletes one secret of a client (or, with no id, all of them); returns those it deleted. */
export function deleteSecrets(trx: Transaction<Database>, clientId: string, secretId?: string): Promise<ApiClientSecretRow[]> {
  let query = trx.updateTable('api_client_secrets').set({ deleted_at: new Date() }).where('client_id', '=', clientId).where('deleted_at', 'is', null);
  if (secretId) query = query.where('id', '=', secretId);
  return query.returningAll().execute();
}

/** A secret that may be used now (not deleted, not expired), by its hash, beside its client. */
export function findUsableSecret(db: Kysely<Database>, secretHash: string) {
  return db
    .selectFrom('api_client_secrets')
    .innerJoin('api_clients', 'api_clients.id', 'api_client_secrets.client_id')
    .select([
      'api_client_secrets.id as secret_id',
      'api_client_secrets.secret_hash',
      'api_clients.id as client_id',
      'api_clients.type',
      'api_clients.status',
      'api_clients.scopes',
      'api_clients.token_generation',
      'api_clients.id_token_signed_response_alg',
      'api_clients.first_party',
    ])
    .where('api_client_secrets.secret_hash', '=', secretHash)
    .where('api_client_secrets.deleted_at', 'is', null)
    .where((eb) => eb.or([eb('api_client_secrets.expires_at', 'is', null), eb('api_client_secrets.expires_at', '>', sql<Date>`now()`)]))
    .where('api_clients.deleted_at', 'is', null)
    .executeTakeFirst();
}

/** A client that is not deleted, by id, as an authentication without a secret (a public app) reads it. */
export function findUndeletedClient(db: Kysely<Database>, id: string) {
  return db.selectFrom('api_clients').select(['id as client_id', 'type', 'status', 'scopes', 'id_token_signed_response_alg', 'first_party', 'token_generation']).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
}

/**
 * Notes a client, and the secret it sent, as used: at most one write a minute each, however many
 * requests it makes (`last_used_at` of API.md section 11). Sessions' admission calls it through
 * what app.ts hands the sessions plugin (sessions may not import clients); the token endpoint too.
 */
export async function noteClientUsed(db: Kysely<Database>, clientId: string, secretId: string | null): Promise<void> {
  await sql`update api_clients set last_used_at = now() where id = ${clientId} and (last_used_at is null or last_used_at < now() - interval '1 minute')`.execute(db);
  if (secretId) {
    await sql`update api_client_secrets set last_used_at = now() where id = ${secretId} and (last_used_at is null or last_used_at < now() - interval '1 minute')`.execute(db);
  }
}
