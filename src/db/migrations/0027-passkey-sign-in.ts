import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Passkeys as the first factor (API.md section 19). A sign-in's challenge is asked for before
 * anyone is known: it is kept like the other passkey challenges (5 minutes, single use) with
 * purpose `sign_in`, no user and no owner; the passkey that answers it names the user. Every
 * other challenge still has a user and exactly one owner (a login token or a session).
 *
 * A login token records the factor its first step proved (`first_factor`: `pwd` a password,
 * `hwk` a passkey without user verification), so the second step adds its values to that one's
 * `amr` and a passkey is not accepted as the second factor of a passkey's sign-in.
 */
export const passkeySignIn: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`alter table webauthn_challenges drop constraint webauthn_challenges_purpose_check`.execute(db);
    await sql`alter table webauthn_challenges drop constraint webauthn_challenges_check`.execute(db);
    await sql`alter table webauthn_challenges alter column user_id drop not null`.execute(db);
    await sql`alter table webauthn_challenges add constraint webauthn_challenges_purpose_check check (purpose in ('registration', 'authentication', 'sign_in'))`.execute(db);
    await sql`
      alter table webauthn_challenges add constraint webauthn_challenges_owner_check check (
        case when purpose = 'sign_in' then user_id is null and num_nonnulls(login_token_id, session_id) = 0
        else user_id is not null and num_nonnulls(login_token_id, session_id) = 1 end
      )`.execute(db);
    await sql`alter table mfa_login_tokens add column first_factor text not null default 'pwd' check (first_factor in ('pwd', 'hwk'))`.execute(db);
  },
};
