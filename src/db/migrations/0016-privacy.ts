import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Privacy (API.md section 13):
 * - `users.erased_at`: when what identified the person was removed; retention erases the deleted
 *   users that do not have it yet, found through a partial index.
 * - an export reads every session of a user (ended ones too) and the reservations the user
 *   created, a page at a time, each through an index that ends in (created_at, id).
 * - retention purges sessions that ended, or expired, long ago.
 */
export const privacy: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`alter table users add column erased_at timestamptz`.execute(db);
    await sql`create index users_awaiting_erasure on users (deleted_at) where deleted_at is not null and erased_at is null`.execute(db);
    await sql`create index sessions_all_of_user on sessions (user_id, created_at, id)`.execute(db);
    await sql`create index sessions_by_end on sessions (ended_at) where ended_at is not null`.execute(db);
    await sql`create index sessions_by_expiry on sessions (expires_at)`.execute(db);
    await sql`create index reservations_by_creator on reservations (created_by, created_at, id) where created_by is not null`.execute(db);
  },
};
