import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Sign-ins with another identity provider under way (API.md section 20). Between the button and
 * the provider's callback the service must remember the attempt's `state`, `nonce` and PKCE
 * verifier, and any instance may get the callback: so they live here, never in process memory.
 *
 * - `state_hash`: SHA-256 of the random `state`, which travels in URLs; the row is found by it.
 * - `code_verifier`: kept plain. It is worth nothing without the code, which only the provider
 *   sends to the browser bound by `browser_hash`, and it lives 10 minutes and is spent once;
 *   sealing it would add a key dependency and protect nothing the database reader lacks.
 * - `browser_hash`: the hash of the browser's CSRF token (as the hosted pages bind a pending
 *   create-account): a callback is taken only from the browser that pressed the button, so a
 *   link with someone else's code and state (login CSRF) signs nobody in.
 * - `authorization_query`: the original `/oauth/authorize` query, carried on after the callback.
 * - `linking_user_id`: set when a signed-in user connects a provider from the profile (later).
 * - `used_at`: the callback spends the row in one statement, so a replayed `state` finds nothing.
 *
 * `mfa_login_tokens.first_factor` gains `fed`: a federated sign-in may be followed by a second
 * factor, and the session's `amr` names both (`["fed", "otp", "mfa"]`).
 */
export const federatedSignIns: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      create table federated_sign_ins (
        id uuid primary key,
        provider_id uuid not null references identity_providers (id) on delete cascade,
        state_hash text not null,
        nonce text not null,
        code_verifier text not null,
        browser_hash text not null,
        authorization_query text not null,
        linking_user_id uuid references users (id) on delete cascade,
        created_at timestamptz not null default now(),
        expires_at timestamptz not null,
        used_at timestamptz,
        constraint federated_sign_ins_state_unique unique (state_hash)
      )`.execute(db);
    await sql`create index federated_sign_ins_expiry on federated_sign_ins (expires_at)`.execute(db);
    await sql`alter table mfa_login_tokens drop constraint mfa_login_tokens_first_factor_check`.execute(db);
    await sql`alter table mfa_login_tokens add constraint mfa_login_tokens_first_factor_check check (first_factor in ('pwd', 'hwk', 'email', 'fed'))`.execute(db);
  },
};
