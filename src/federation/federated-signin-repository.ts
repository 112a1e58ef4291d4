import type { Insertable, Kysely, Transaction } from 'kysely';
import type { Database, FederatedSignInRow, FederatedSignInsTable } from '../db/tables.js';

/** Keeps a sign-in under way until its callback (migration 0041). */
export async function insertFederatedSignIn(db: Kysely<Database>, attempt: Insertable<FederatedSignInsTable>): Promise<void> {
  await db.insertInto('federated_sign_ins').values(attempt).execute();
}

/**
 * Spends the live, unspent attempt of this `state` for this provider and this browser, in one
 * statement: of two callbacks with the same `state` (a replay, or two instances at once) one
 * gets the row, the other nothing.
 */
export function spendFederatedSignIn(trx: Transaction<Database>, match: { stateHash: string; providerId: string; browserHash: string }): Promise<FederatedSignInRow | undefined> {
  return trx
    .updateTable('federated_sign_ins')
    .set({ used_at: new Date() })
    .where('state_hash', '=', match.stateHash)
    .where('provider_id', '=', match.providerId)
    .where('browser_hash', '=', match.browserHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', new Date())
    .returningAll()
    .executeTakeFirst();
}

/** Attempts past their life (spent or not) go: nothing in them is needed after 10 minutes. */
export async function deleteStaleFederatedSignIns(db: Kysely<Database>, before: Date): Promise<void> {
  await db.deleteFrom('federated_sign_ins').where('expires_at', '<', before).execute();
}
