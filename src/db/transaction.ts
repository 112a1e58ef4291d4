import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from './tables.js';

const RETRY_REASONS: Record<string, keyof typeof transactionRetries> = { '40001': 'serialization_failure', '40P01': 'deadlock' };
const MAX_ATTEMPTS = 5;

/**
 * Transactions retried in this process since it started, by reason: a retry hides a deadlock
 * from the caller, so the metrics (`database_transaction_retries_total`) and the race tests read
 * these to see one.
 */
export const transactionRetries = { serialization_failure: 0, deadlock: 0 };

/**
 * The one transaction convention of the service:
 * - A transaction is opened by the code that needs it, with `inTransaction`: over HTTP the
 *   admission (`request.access.transaction`), which a route hands the work to (a write that is
 *   one statement may go without one: `request.access.oneStatement`); a background job,
 *   a start-up step or a service whose work spans a slow step outside any transaction (argon2,
 *   DNS) opens its own.
 * - A function that runs inside a transaction takes it as `trx: Transaction<Database>` and never
 *   opens another: the types keep it from being called outside one.
 * - Transactions do not nest: `inTransaction` on a transaction throws, where joining it silently
 *   would lose the retry below (a retried inner transaction would replay the outer one's work).
 * Serialization failures and deadlocks, which PostgreSQL may raise under contention, are retried.
 */
export async function inTransaction<T>(db: Kysely<Database>, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  if (db.isTransaction) throw new Error('inTransaction inside a transaction: take the Transaction as an argument instead');
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(work);
    } catch (error) {
      const reason = RETRY_REASONS[(error as { code?: string }).code ?? ''];
      if (attempt >= MAX_ATTEMPTS || !reason) throw error;
      transactionRetries[reason]++;
    }
  }
}

/**
 * Runs `work` under a savepoint of the caller's transaction: when it throws, only its own writes
 * are undone and the answer is false (the caller logs and goes on); true when it went through.
 */
export async function withSavepoint(trx: Transaction<Database>, name: string, work: () => Promise<unknown>): Promise<boolean> {
  await sql`savepoint ${sql.id(name)}`.execute(trx);
  try {
    await work();
    await sql`release savepoint ${sql.id(name)}`.execute(trx);
    return true;
  } catch {
    await sql`rollback to savepoint ${sql.id(name)}`.execute(trx);
    return false;
  }
}
