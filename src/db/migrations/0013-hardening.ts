import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Hardening III (API.md section 10):
 * - `account_attempts`: what per-account limits count, whatever address asks (failed logins,
 *   email changes, verification resends), so every instance sees the same counts.
 * - `one_time_tokens.sealed_token`: the live verification link, sealed, so a resend sends the
 *   same link instead of minting another; cleared once the token is spent.
 * - `refresh_tokens.successor_sealed`: the refresh token a rotation issued, sealed with the
 *   spent token itself, so a replay within REFRESH_REUSE_INTERVAL gets that very token back.
 * - reservations listed newest first, and by reference (GET /api/reservations).
 * - `claim_token` on the outboxes: the claim that an attempt's result is written under, so a
 *   sender whose lease ran out cannot overwrite the result of the instance that took over.
 */
export const hardening: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      create table account_attempts (
        id uuid primary key,
        kind text not null check (kind in ('login_failure', 'email_change', 'verification_resend')),
        subject text not null,
        created_at timestamptz not null
      )`.execute(db);
    await sql`create index account_attempts_by_subject on account_attempts (kind, subject, created_at)`.execute(db);
    await sql`alter table one_time_tokens add column sealed_token text`.execute(db);
    await sql`alter table refresh_tokens add column successor_sealed text`.execute(db);
    await sql`create index email_outbox_sent on email_outbox (sent_at) where status = 'sent'`.execute(db);
    await sql`create index reservations_by_creation on reservations (created_at, id)`.execute(db);
    await sql`create index reservations_by_reference on reservations (reference, created_at, id) where reference is not null`.execute(db);
    for (const table of ['email_outbox', 'webhook_deliveries']) {
      await sql`alter table ${sql.table(table)} add column claim_token uuid`.execute(db);
    }
  },
};
