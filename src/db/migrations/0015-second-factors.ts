import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Second factors (API.md section 12). A factor is a TOTP secret (sealed like other secrets the
 * service must read back; `totp_last_step` makes each code good once) or a passkey (its
 * credential id, COSE public key and signature counter). Recovery codes are kept as SHA-256
 * hashes (80 random bits each). A login whose user has a factor leaves an `mfa_login_tokens`
 * row, not a session: the token (kept as its hash) names the user and the `session_version` it
 * saw. Passkey challenges are kept server-side, single use, tied to a login token or a session.
 * Sessions record how they started (`amr`, `auth_time`) and when their second factor was last
 * verified (`mfa_verified_at`, for step-up).
 */
export const secondFactors: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      create table mfa_factors (
        id uuid primary key,
        user_id uuid not null references users (id),
        type text not null check (type in ('totp', 'webauthn')),
        name text not null,
        totp_secret text,
        totp_last_step bigint,
        credential_id text unique,
        public_key bytea,
        sign_count bigint not null default 0,
        transports text[],
        confirmed_at timestamptz,
        created_at timestamptz not null,
        last_used_at timestamptz,
        check ((type = 'totp') = (totp_secret is not null)),
        check ((type = 'webauthn') = (credential_id is not null and public_key is not null))
      )`.execute(db);
    await sql`create index mfa_factors_of_user on mfa_factors (user_id, created_at)`.execute(db);
    await sql`
      create table mfa_recovery_codes (
        id uuid primary key,
        user_id uuid not null references users (id),
        code_hash text not null,
        created_at timestamptz not null,
        used_at timestamptz,
        unique (user_id, code_hash)
      )`.execute(db);
    await sql`
      create table mfa_login_tokens (
        id uuid primary key,
        token_hash text not null unique,
        user_id uuid not null references users (id),
        session_version integer not null,
        failures integer not null default 0,
        created_at timestamptz not null,
        expires_at timestamptz not null,
        used_at timestamptz
      )`.execute(db);
    await sql`create index mfa_login_tokens_by_expiry on mfa_login_tokens (expires_at)`.execute(db);
    await sql`
      create table webauthn_challenges (
        challenge text primary key,
        purpose text not null check (purpose in ('registration', 'authentication')),
        user_id uuid not null references users (id),
        login_token_id uuid,
        session_id uuid,
        expires_at timestamptz not null,
        check (num_nonnulls(login_token_id, session_id) = 1)
      )`.execute(db);
    await sql`create index webauthn_challenges_by_expiry on webauthn_challenges (expires_at)`.execute(db);
    await sql`alter table sessions add column amr text[] not null default '{pwd}', add column auth_time timestamptz, add column mfa_verified_at timestamptz`.execute(db);
    await sql`update sessions set auth_time = created_at`.execute(db);
    await sql`alter table sessions alter column auth_time set not null`.execute(db);
  },
};
