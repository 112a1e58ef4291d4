import type { Insertable, Kysely } from 'kysely';
import type { AuthorizationCodesTable, Database } from '../db/tables.js';

export function insertAuthorizationCode(db: Kysely<Database>, code: Insertable<AuthorizationCodesTable>): Promise<void> {
  return db.insertInto('authorization_codes').values(code).execute().then(() => undefined);
}
