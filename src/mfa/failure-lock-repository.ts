import { sql, type Transaction } from 'kysely';
import type { Database } from '../db/tables.js';

/** A user's count of wrong second-factor codes, as a check finds it under the row's lock. */
export interface FailureCount {
  failures: number;
  locks: number;
  /** Seconds the current lock has left (rounded up); 0 when the user's checks are not locked. */
  seconds_locked: number;
}

/**
 * The user's row, made when missing and locked for the caller's transaction (an upsert that
 * changes nothing locks it as an update does): every second-factor check of the user, on any
 * instance, waits here for the one before it to commit, so it sees that one's count and lock.
 */
export function lockFailureCount(trx: Transaction<Database>, userId: string): Promise<FailureCount> {
  return trx
    .insertInto('mfa_failure_locks')
    .values({ user_id: userId, updated_at: sql<Date>`now()` })
    .onConflict((conflict) => conflict.column('user_id').doUpdateSet({ user_id: (eb) => eb.ref('excluded.user_id') }))
    .returning(['failures', 'locks', sql<number>`coalesce(greatest(0, ceil(extract(epoch from locked_until - now())))::integer, 0)`.as('seconds_locked')])
    .executeTakeFirstOrThrow();
}

/** One more wrong code in a row: the count after it. */
export async function countWrongCode(trx: Transaction<Database>, userId: string): Promise<number> {
  const row = await trx
    .updateTable('mfa_failure_locks')
    .set((eb) => ({ failures: eb('failures', '+', 1), updated_at: sql<Date>`now()` }))
    .where('user_id', '=', userId)
    .returning('failures')
    .executeTakeFirstOrThrow();
  return row.failures;
}

/**
 * Locks the user's checks: the count starts again, and the lock lasts `firstSeconds` doubled for
 * each lock before it, at most `maxSeconds`. A right code between locks does not undo the
 * doubling (a guesser holding the password could otherwise let the owner sign in between
 * bursts); a lock that begins a day or more after the last one ended is a first one again, so
 * the owner who mistyped ten codes once a year is not locked for a day. Returns when it ends
 * (the database's clock).
 */
export async function startLock(trx: Transaction<Database>, userId: string, durations: { firstSeconds: number; maxSeconds: number }): Promise<Date> {
  // The values before this update: the locks so far, unless the last one ended a day ago or more.
  const locksBefore = sql<number>`(case when locked_until < now() - interval '1 day' then 0 else locks end)`;
  const row = await trx
    .updateTable('mfa_failure_locks')
    .set({
      failures: 0,
      locks: sql<number>`${locksBefore} + 1`,
      // Capped so the power stays a small number.
      locked_until: sql<Date>`now() + make_interval(secs => least(${durations.firstSeconds} * power(2, least(${locksBefore}, 30)), ${durations.maxSeconds}))`,
      updated_at: sql<Date>`now()`,
    })
    .where('user_id', '=', userId)
    .returning('locked_until')
    .executeTakeFirstOrThrow();
  return row.locked_until!;
}

/** A right code: the wrong ones before it no longer count toward a lock (the locks before stay counted). */
export async function resetWrongCodes(trx: Transaction<Database>, userId: string): Promise<void> {
  await trx.updateTable('mfa_failure_locks').set({ failures: 0, updated_at: sql<Date>`now()` }).where('user_id', '=', userId).where('failures', '>', 0).execute();
}

/** An erasure or an admin's reset: the user's count and locks go with its factors. */
export async function deleteFailureCount(trx: Transaction<Database>, userId: string): Promise<void> {
  await trx.deleteFrom('mfa_failure_locks').where('user_id', '=', userId).execute();
}
