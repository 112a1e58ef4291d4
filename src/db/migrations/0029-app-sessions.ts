import { sql, type Kysely, type Migration } from 'kysely';

/**
 * A session an app started for a user (API.md section 18): a session of section 3 like any
 * other, ended by everything that ends one, that also names the app and the scopes granted to
 * it. Its tokens act for the user only within those scopes. A session of a direct sign-in has
 * neither.
 */
export const appSessions: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      alter table sessions
        add column client_id uuid references api_clients (id),
        add column scopes text[],
        add constraint sessions_app_has_scopes check ((client_id is null) = (scopes is null))`.execute(db);
    // "Withdraw an app's consent": the sessions that app holds for a user.
    await sql`create index sessions_of_app on sessions (client_id, user_id) where client_id is not null and ended_at is null`.execute(db);
  },
};
