import { sql, type Insertable, type Kysely, type Transaction } from 'kysely';
import type { AuthorizationCodeRow, AuthorizationCodesTable, Database } from '../db/tables.js';

export function insertAuthorizationCode(db: Kysely<Database>, code: Insertable<AuthorizationCodesTable>): Promise<void> {
  return db.insertInto('authorization_codes').values(code).execute().then(() => undefined);
}

/**
 * Retention: codes a day past their expiry go. A day, not at once, so that a code replayed soon
 * after it lapsed is still known and still ends the session its first exchange started.
 */
export async function deleteLapsedAuthorizationCodes(db: Kysely<Database>): Promise<number> {
  const result = await db.deleteFrom('authorization_codes').where('expires_at', '<', sql<Date>`now() - interval '1 day'`).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** A code by its hash, locked: two exchanges of one code take turns, so only one finds it unused. */
export function lockAuthorizationCode(trx: Transaction<Database>, codeHash: string): Promise<AuthorizationCodeRow | undefined> {
  return trx.selectFrom('authorization_codes').selectAll().where('code_hash', '=', codeHash).forUpdate().executeTakeFirst();
}

/** The code is spent, by the exchange that started `sessionId`. */
export async function markAuthorizationCodeUsed(trx: Transaction<Database>, id: string, sessionId: string): Promise<void> {
  await trx.updateTable('authorization_codes').set({ used_at: new Date(), session_id: sessionId }).where('id', '=', id).execute();
}
