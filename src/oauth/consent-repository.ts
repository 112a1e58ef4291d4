import type { Kysely, Transaction } from 'kysely';
import type { AppConsentRow, Database } from '../db/tables.js';

export function findConsent(db: Kysely<Database>, userId: string, clientId: string): Promise<AppConsentRow | undefined> {
  return db.selectFrom('app_consents').selectAll().where('user_id', '=', userId).where('client_id', '=', clientId).executeTakeFirst();
}

/** The consent share-locked: a withdrawal waits for the transaction that relies on it, and then ends what it started. */
export function findConsentForShare(trx: Transaction<Database>, userId: string, clientId: string): Promise<AppConsentRow | undefined> {
  return trx.selectFrom('app_consents').selectAll().where('user_id', '=', userId).where('client_id', '=', clientId).forShare().executeTakeFirst();
}

/** Records a grant, replacing an earlier one for the same app: the scopes as granted now, and when. */
export function upsertConsent(db: Kysely<Database>, consent: AppConsentRow): Promise<AppConsentRow> {
  return db
    .insertInto('app_consents')
    .values(consent)
    .onConflict((conflict) => conflict.columns(['user_id', 'client_id']).doUpdateSet({ scopes: consent.scopes, granted_at: consent.granted_at }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The user's consents to apps that still exist, newest first, with what the user is shown of each app. */
export function consentsOfUser(db: Kysely<Database>, userId: string) {
  return db
    .selectFrom('app_consents')
    .innerJoin('api_clients', 'api_clients.id', 'app_consents.client_id')
    .select(['app_consents.client_id', 'api_clients.name', 'api_clients.logo_uri', 'app_consents.scopes', 'app_consents.granted_at'])
    .where('app_consents.user_id', '=', userId)
    .where('api_clients.deleted_at', 'is', null)
    .orderBy('app_consents.granted_at', 'desc')
    .orderBy('app_consents.client_id', 'desc');
}

/** Withdraws the user's consent to the app; the row it removed, or undefined when there was none. */
export function deleteConsent(db: Kysely<Database>, userId: string, clientId: string): Promise<AppConsentRow | undefined> {
  return db.deleteFrom('app_consents').where('user_id', '=', userId).where('client_id', '=', clientId).returningAll().executeTakeFirst();
}
