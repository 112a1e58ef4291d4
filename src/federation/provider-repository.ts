import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, IdentityProviderRow, IdentityProvidersTable } from '../db/tables.js';
import type { Insertable, Updateable } from 'kysely';
import { callerRead } from '../sessions/caller-query.js';

/** Every provider, by name without regard to case (then id), beside the caller. */
export const providersByName = callerRead<IdentityProviderRow, []>('identityProviders.byName', (db) =>
  db.selectFrom('identity_providers').selectAll().orderBy(sql`lower(name)`).orderBy('id'),
);

/** A provider by id, beside the caller. */
export const providerById = callerRead<IdentityProviderRow, [string]>('identityProviders.byId', (db, id) => db.selectFrom('identity_providers').selectAll().where('id', '=', id));

export function lockProvider(trx: Transaction<Database>, id: string): Promise<IdentityProviderRow | undefined> {
  return trx.selectFrom('identity_providers').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

export function insertProvider(trx: Transaction<Database>, provider: Insertable<IdentityProvidersTable>): Promise<IdentityProviderRow> {
  return trx.insertInto('identity_providers').values(provider).returningAll().executeTakeFirstOrThrow();
}

/** Applies a change and moves `version` on by one; the caller has locked the row. */
export function updateProvider(trx: Transaction<Database>, id: string, change: Omit<Updateable<IdentityProvidersTable>, 'id' | 'version' | 'updated_at'>): Promise<IdentityProviderRow> {
  return trx
    .updateTable('identity_providers')
    .set({ ...change, version: sql`version + 1`, updated_at: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteProvider(trx: Transaction<Database>, id: string): Promise<void> {
  await trx.deleteFrom('identity_providers').where('id', '=', id).execute();
}

/**
 * The enabled provider whose discovery document was tried longest ago, if before `triedBefore`:
 * marked tried now, in one statement that skips a row another instance is marking, so with
 * several instances each provider is read by one of them per period. Its issuer and client id.
 */
export function claimProviderDueForDiscovery(db: Kysely<Database>, triedBefore: Date): Promise<Pick<IdentityProviderRow, 'id' | 'issuer' | 'client_id'> | undefined> {
  return db
    .updateTable('identity_providers')
    .set({ discovery_attempted_at: new Date() })
    .where('id', '=', (eb) =>
      eb
        .selectFrom('identity_providers')
        .select('id')
        .where('enabled', '=', true)
        .where('discovery_attempted_at', '<', triedBefore)
        .orderBy('discovery_attempted_at')
        .limit(1)
        .forUpdate()
        .skipLocked(),
    )
    .returning(['id', 'issuer', 'client_id'])
    .executeTakeFirst();
}

/**
 * Keeps a document the re-read found, unless the provider's issuer changed meanwhile (the save
 * that changed it stored the new issuer's own). A re-read is no admin's write: `version` stays.
 */
export async function storeRereadDiscovery(db: Kysely<Database>, id: string, issuer: string, document: Record<string, unknown>): Promise<void> {
  await db.updateTable('identity_providers').set({ discovery: JSON.stringify(document), discovered_at: new Date() }).where('id', '=', id).where('issuer', '=', issuer).execute();
}

/** An enabled provider by id (a sign-in's start and callback): a disabled or deleted one is none. */
export function enabledProviderById(db: Kysely<Database>, id: string): Promise<IdentityProviderRow | undefined> {
  return db.selectFrom('identity_providers').selectAll().where('id', '=', id).where('enabled', '=', true).executeTakeFirst();
}

/** The buttons of the sign-in page: each enabled provider's id, label and authorization endpoint (from its discovery document), by label. */
export function enabledProviderButtons(db: Kysely<Database>): Promise<{ id: string; button_label: string; authorization_endpoint: string | null }[]> {
  return db
    .selectFrom('identity_providers')
    .select(['id', 'button_label', sql<string | null>`discovery ->> 'authorization_endpoint'`.as('authorization_endpoint')])
    .where('enabled', '=', true)
    .orderBy(sql`lower(button_label)`)
    .orderBy('id')
    .execute();
}

/** The providers a signed-in user may connect (the profile's "Connect" buttons): each enabled one's id, name and label, by label. */
export function connectableProviders(db: Kysely<Database>) {
  return db.selectFrom('identity_providers').select(['id', 'name', 'button_label']).where('enabled', '=', true).orderBy(sql`lower(button_label)`).orderBy('id');
}

/**
 * The provider, if it is still there and enabled, key-share-locked for the link the transaction
 * is about to write: a deletion waits for the link (and then removes it), and a provider disabled
 * or deleted during the exchange links nothing.
 */
export function shareEnabledProvider(trx: Transaction<Database>, id: string): Promise<{ name: string } | undefined> {
  return trx.selectFrom('identity_providers').select('name').where('id', '=', id).where('enabled', '=', true).forKeyShare().executeTakeFirst();
}
