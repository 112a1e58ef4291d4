import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Sign-in by email code (API.md section 19). An account may have no password (one made by a
 * code, or later by another provider): `password_hash` becomes nullable, and a password login of
 * such an account fails as a wrong password does. `email_codes` keeps each 6-digit code as a
 * SHA-256 of its row id and the code, for the address it was sent to (as it was asked for;
 * looked up without regard to case) and the account that had the address then (null for a code
 * that may create one); `failures` counts wrong tries (the 5th kills the code); `used_at` is
 * set when it signs in, or when a newer code, a password change, an email change, a suspension
 * or a deletion replaces or spends it. Every code made in the last hour counts toward the
 * address's 3 an hour, spent or not. A login waiting for its second factor may now have proved
 * its first one by email code (`first_factor` `email`), so the session's `amr` names both.
 */
export const emailCodes: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`alter table users alter column password_hash drop not null`.execute(db);
    await sql`
      create table email_codes (
        id uuid primary key,
        email text not null,
        user_id uuid references users (id),
        code_hash text not null,
        failures integer not null default 0 check (failures >= 0),
        created_at timestamptz not null,
        expires_at timestamptz not null,
        used_at timestamptz
      )`.execute(db);
    await sql`create index email_codes_by_address on email_codes (lower(email), created_at)`.execute(db);
    await sql`create index email_codes_live_of_user on email_codes (user_id) where used_at is null`.execute(db);
    await sql`alter table mfa_login_tokens drop constraint mfa_login_tokens_first_factor_check`.execute(db);
    await sql`alter table mfa_login_tokens add constraint mfa_login_tokens_first_factor_check check (first_factor in ('pwd', 'hwk', 'email'))`.execute(db);
  },
};
