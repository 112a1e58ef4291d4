import { sql, type Kysely, type Migration } from 'kysely';

/**
 * The hosted create-account page (API.md section 18) must not tell whether an email has an
 * account before a credential was proved, so it makes no account at once: it mails a code, and
 * the account is made only when the code comes back. The name and the password hash the page was
 * given wait on the code's row with the hash of the browser that gave them (its CSRF token's):
 * only a code that comes back through that browser's page applies them, so another person's
 * create for the same address, or the code posted to the API, cannot set the password. The hash
 * is an argon2 one, as `users.password_hash` holds; it is cleared when the code is spent or
 * replaced.
 */
export const emailCodeSignups: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`alter table email_codes add column signup_name text`.execute(db);
    await sql`alter table email_codes add column signup_password_hash text`.execute(db);
    await sql`alter table email_codes add column signup_browser_hash text`.execute(db);
  },
};
