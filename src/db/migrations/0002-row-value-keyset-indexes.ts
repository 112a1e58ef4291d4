import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Keyset pages compare the row value (created_at, id) with the cursor. PostgreSQL uses such
 * a comparison as an index condition only on an index whose columns run the same way as the
 * comparison, so the newest-first indexes become plain ascending ones (scanned backwards).
 */
export const rowValueKeysetIndexes: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`drop index users_newest_first`.execute(db);
    await sql`create index users_by_creation on users (created_at, id) where deleted_at is null`.execute(db);
    await sql`drop index balance_ledger_newest_first`.execute(db);
    await sql`create index balance_ledger_by_user on balance_ledger (user_id, created_at, id)`.execute(db);
  },
};
