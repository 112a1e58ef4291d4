import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/tables.js';
import { record, type EventContext } from '../events/event-recorder.js';
import { endSessions } from '../sessions/session-service.js';
import { deleteConsent, findConsent, findConsentForShare, upsertConsent } from './consent-repository.js';

/** Whether the user's consent to the app covers every scope asked for (API.md section 18, "Consent"). */
export async function consentCovers(db: Kysely<Database>, userId: string, clientId: string, scopes: readonly string[]): Promise<boolean> {
  const consent = await findConsent(db, userId, clientId);
  return consent !== undefined && scopes.every((scope) => consent.scopes.includes(scope));
}

/**
 * The same, in a transaction that starts a session on the strength of the consent (a code
 * exchange): the row is share-locked, so a withdrawal committing meanwhile waits, then ends the
 * session this transaction started; one that committed before leaves nothing to rely on.
 */
export async function consentStillCovers(trx: Transaction<Database>, userId: string, clientId: string, scopes: readonly string[]): Promise<boolean> {
  const consent = await findConsentForShare(trx, userId, clientId);
  return consent !== undefined && scopes.every((scope) => consent.scopes.includes(scope));
}

/** The user allowed the app these scopes on the consent page: kept, with `user.app_authorized`. */
export async function grantConsent(trx: Transaction<Database>, userId: string, clientId: string, scopes: readonly string[], context: EventContext): Promise<void> {
  const consent = await upsertConsent(trx, { user_id: userId, client_id: clientId, scopes: [...new Set(scopes)], granted_at: new Date() });
  await record(trx, { type: 'user.app_authorized', subjectType: 'user', subjectId: userId, data: { client_id: clientId, scopes: consent.scopes } }, context);
}

/**
 * The user withdraws an app's consent (API.md section 18): the consent goes, every session the
 * app holds for the user ends (refresh tokens revoked, access tokens refused on their next
 * request), and `user.app_revoked` is recorded, all in the caller's transaction. False when the
 * user had no consent for the app (then nothing changes).
 */
export async function withdrawConsent(trx: Transaction<Database>, userId: string, clientId: string, context: EventContext): Promise<boolean> {
  const consent = await deleteConsent(trx, userId, clientId);
  if (!consent) return false;
  await endSessions(trx, { userId, clientId });
  await record(trx, { type: 'user.app_revoked', subjectType: 'user', subjectId: userId, data: { client_id: clientId, scopes: consent.scopes } }, context);
  return true;
}
