import { sql, type Kysely, type Migration } from 'kysely';

/**
 * The authorization server of API.md section 18.
 *
 * - A sign-in session is a session of section 3 that a browser holds through the hosted pages'
 *   cookie: the cookie carries a random secret, stored only as its SHA-256 in
 *   `sessions.browser_secret_hash` (a session id alone is no secret: tokens' `sid` name it).
 * - A session an app starts for a user names the sign-in session it came from, so that logging
 *   out there ends it too.
 * - `authorization_codes` keeps each code as a SHA-256, bound to the app, its redirect URI, the
 *   PKCE challenge, the nonce and the sign-in; `session_id` is the session its exchange started,
 *   which a second presentation ends (RFC 9700).
 * - `app_consents` is what a user granted a third-party app: one row per user and app.
 *
 * Sessions are purged (retention) and deleted (erasure): a code goes with its sign-in session,
 * and what only names a session forgets it.
 */
export const authorizationServer: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      alter table sessions
        add column browser_secret_hash text,
        add column signin_session_id uuid references sessions (id) on delete set null`.execute(db);
    await sql`create unique index sessions_by_browser_secret on sessions (browser_secret_hash) where browser_secret_hash is not null`.execute(db);
    await sql`create index sessions_of_signin on sessions (signin_session_id) where signin_session_id is not null and ended_at is null`.execute(db);
    await sql`
      create table authorization_codes (
        id uuid primary key,
        code_hash text not null unique,
        client_id uuid not null references api_clients (id),
        user_id uuid not null references users (id),
        redirect_uri text not null,
        code_challenge text not null,
        nonce text,
        scopes text[] not null,
        signin_session_id uuid not null references sessions (id) on delete cascade,
        auth_time timestamptz not null,
        amr text[] not null,
        created_at timestamptz not null,
        expires_at timestamptz not null,
        used_at timestamptz,
        session_id uuid references sessions (id) on delete set null
      )`.execute(db);
    await sql`create index authorization_codes_expiry on authorization_codes (expires_at)`.execute(db);
    await sql`
      create table app_consents (
        user_id uuid not null references users (id),
        client_id uuid not null references api_clients (id),
        scopes text[] not null,
        granted_at timestamptz not null,
        primary key (user_id, client_id)
      )`.execute(db);
    await sql`create index app_consents_newest on app_consents (user_id, granted_at desc, client_id)`.execute(db);
  },
};
