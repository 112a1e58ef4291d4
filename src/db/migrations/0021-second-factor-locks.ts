import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Second-factor locks (API.md section 17): one row per user whose second factor was ever checked
 * (every check locks it, so it is made at the first). `failures` counts the wrong codes in a row (a right one sets it back to 0); at
 * MFA_FAILURE_LIMIT the user's second-factor checks are locked until `locked_until`, `locks`
 * counts the locks so far (each lasts twice the one before, 15 minutes to 24 hours; a day after the last ended, 15 minutes again) and
 * `failures` starts again. Every check locks its user's row first, so checks of one user on any
 * number of instances take their turns: no failure is lost and a lock starts once.
 */
export const secondFactorLocks: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      create table mfa_failure_locks (
        user_id uuid primary key references users (id),
        failures integer not null default 0 check (failures >= 0),
        locks integer not null default 0 check (locks >= 0),
        locked_until timestamptz,
        updated_at timestamptz not null
      )`.execute(db);
  },
};
