import { sql, type Kysely, type Migration } from 'kysely';

/**
 * The hosted create-account page (API.md section 18) must not tell whether an email has an
 * account before a credential was proved, so it makes no account at once: it mails a code, and
 * the account is made only when the code comes back. The name and the password hash the page was
 * given wait on the code's row (only on a code for an address no account has); a code that comes
 * back makes the account with them. The hash is an argon2 one, as `users.password_hash` holds,
 * and it dies with the code's row (stale codes are purged daily).
 */
export const emailCodeSignups: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`alter table email_codes add column signup_name text`.execute(db);
    await sql`alter table email_codes add column signup_password_hash text`.execute(db);
  },
};
