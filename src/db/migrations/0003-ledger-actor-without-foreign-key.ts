import { sql, type Kysely, type Migration } from 'kysely';

/**
 * The foreign key from a ledger entry to its actor made every balance change take a KEY SHARE
 * lock on the acting admin's row, and an admin action that locks admin rows then waited on it
 * in the opposite order: a deadlock under load. The actor is an audit field; users are never
 * deleted for real, so the reference cannot dangle.
 */
export const ledgerActorWithoutForeignKey: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`alter table balance_ledger drop constraint balance_ledger_actor_id_fkey`.execute(db);
  },
};
