import type { Kysely } from 'kysely';
import type { AppConsentRow, Database } from '../db/tables.js';

export function findConsent(db: Kysely<Database>, userId: string, clientId: string): Promise<AppConsentRow | undefined> {
  return db.selectFrom('app_consents').selectAll().where('user_id', '=', userId).where('client_id', '=', clientId).executeTakeFirst();
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
