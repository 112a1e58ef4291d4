import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Email verification, one-time tokens (password reset, email verification) stored only as
 * hashes, and the email outbox: mails are queued in the transaction of the change that causes
 * them and sent by whichever instance claims them.
 */
export const email: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`alter table users add column email_verified boolean not null default false`.execute(db);
    await sql`
      create table one_time_tokens (
        id uuid primary key,
        user_id uuid not null references users (id),
        purpose text not null check (purpose in ('password_reset', 'email_verification')),
        token_hash text not null unique,
        email text not null,
        expires_at timestamptz not null,
        used_at timestamptz,
        created_at timestamptz not null
      )`.execute(db);
    await sql`create index one_time_tokens_of_user on one_time_tokens (user_id, purpose) where used_at is null`.execute(db);
    await sql`
      create table email_outbox (
        id uuid primary key,
        to_address text not null,
        subject text not null,
        text_body text not null,
        html_body text not null,
        status text not null check (status in ('pending', 'sent', 'failed')),
        attempts integer not null default 0,
        last_error text,
        next_attempt_at timestamptz not null,
        claimed_until timestamptz,
        created_at timestamptz not null,
        sent_at timestamptz
      )`.execute(db);
    await sql`create index email_outbox_due on email_outbox (next_attempt_at) where status = 'pending'`.execute(db);
  },
};
