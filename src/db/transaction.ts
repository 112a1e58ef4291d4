import type { Kysely, Transaction } from 'kysely';
import type { Database } from './tables.js';

const RETRYABLE_CODES = new Set(['40001', '40P01']);
const MAX_ATTEMPTS = 5;

/**
 * Runs `work` in a transaction (or in the one `db` already is), retrying on serialization failures and deadlocks, which
 * PostgreSQL (and distributed engines more often) may raise under contention.
 */
export async function inTransaction<T>(db: Kysely<Database>, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  // Called inside a transaction already (a batch, a start-up step): the work joins it.
  if (db.isTransaction) return work(db as Transaction<Database>);
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(work);
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (attempt >= MAX_ATTEMPTS || !code || !RETRYABLE_CODES.has(code)) throw error;
    }
  }
}
