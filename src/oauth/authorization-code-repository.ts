import { sql, type Insertable, type Kysely } from 'kysely';
import type { AuthorizationCodesTable, Database } from '../db/tables.js';

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
