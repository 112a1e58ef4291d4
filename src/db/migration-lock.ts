import { PostgresAdapter, sql, type Kysely } from 'kysely';

/** The key of the migrations' advisory lock (Kysely's own, so an older instance waits for it too). */
const MIGRATION_LOCK = sql.lit(BigInt('3853314791062309107'));

/**
 * How migrations hold their lock: in one transaction that begins with a transaction-level advisory
 * lock and runs every pending migration, committed (or, after a failure, rolled back) as a whole.
 * Kysely's own adapter takes a session-level lock on the connection before the transaction and
 * unlocks it after, which a pooler in transaction mode can run on three different server
 * connections (API.md section 17): the lock would stay on one of them. migrate.ts runs the
 * migrator with its own transactions off, so the lock's transaction is the migrations' own.
 */
export class TransactionMigrationLockAdapter extends PostgresAdapter {
  override async acquireMigrationLock(db: Kysely<any>): Promise<void> {
    await sql`begin`.execute(db);
    await sql`select pg_advisory_xact_lock(${MIGRATION_LOCK})`.execute(db);
  }

  /** Commits the migrations; a transaction a failure aborted is rolled back by the same COMMIT. */
  override async releaseMigrationLock(db: Kysely<any>): Promise<void> {
    await sql`commit`.execute(db);
  }
}
