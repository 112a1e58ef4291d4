import { sql, type Kysely, type Migration } from 'kysely';

/**
 * A login starts a session; its refresh tokens (one family) rotate inside it and every access
 * token names it. Ending a session ends its access tokens on the next request. Live refresh
 * token families from before sessions existed become sessions, so nobody is signed out.
 */
export const sessions: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      create table sessions (
        id uuid primary key,
        user_id uuid not null references users (id),
        created_at timestamptz not null,
        last_used_at timestamptz not null,
        expires_at timestamptz not null,
        ended_at timestamptz,
        user_agent text,
        ip text
      )`.execute(db);
    await sql`create index sessions_of_user on sessions (user_id, created_at, id) where ended_at is null`.execute(db);
    await sql`
      insert into sessions (id, user_id, created_at, last_used_at, expires_at)
      select family_id, min(user_id::text)::uuid, min(created_at), max(created_at), max(expires_at)
      from refresh_tokens
      where revoked_at is null and expires_at > now()
      group by family_id`.execute(db);
  },
};
