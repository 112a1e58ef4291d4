import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/tables.js';
import { record, type EventContext } from '../events/event-recorder.js';
import { findConsent, upsertConsent } from './consent-repository.js';

/** Whether the user's consent to the app covers every scope asked for (API.md section 18, "Consent"). */
export async function consentCovers(db: Kysely<Database>, userId: string, clientId: string, scopes: readonly string[]): Promise<boolean> {
  const consent = await findConsent(db, userId, clientId);
  return consent !== undefined && scopes.every((scope) => consent.scopes.includes(scope));
}

/** The user allowed the app these scopes on the consent page: kept, with `user.app_authorized`. */
export async function grantConsent(trx: Transaction<Database>, userId: string, clientId: string, scopes: readonly string[], context: EventContext): Promise<void> {
  const consent = await upsertConsent(trx, { user_id: userId, client_id: clientId, scopes: [...new Set(scopes)], granted_at: new Date() });
  await record(trx, { type: 'user.app_authorized', subjectType: 'user', subjectId: userId, data: { client_id: clientId, scopes: consent.scopes } }, context);
}
