import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database, EmailRow } from '../db/tables.js';
import { claimDueRows } from '../jobs/outbox-claim.js';

export interface Mail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** Queues a mail in the caller's transaction: it is sent only if the change it reports commits. */
export async function queueMail(trx: Kysely<Database>, mail: Mail): Promise<void> {
  const now = new Date();
  await trx
    .insertInto('email_outbox')
    .values({
      id: randomUUID(),
      to_address: mail.to,
      subject: mail.subject,
      text_body: mail.text,
      html_body: mail.html,
      status: 'pending',
      attempts: 0,
      next_attempt_at: now,
      created_at: now,
    })
    .execute();
}

const CLAIM_LEASE_SECONDS = 60;

/** Due mails for this instance (see claimDueRows). */
export function claimDueMails(db: Kysely<Database>, limit: number): Promise<EmailRow[]> {
  return claimDueRows<EmailRow>(db, 'email_outbox', CLAIM_LEASE_SECONDS, limit);
}

export async function markMailSent(db: Kysely<Database>, id: string): Promise<void> {
  await db.updateTable('email_outbox').set({ status: 'sent', sent_at: new Date(), claimed_until: null, last_error: null }).where('id', '=', id).execute();
}

export async function markMailFailed(db: Kysely<Database>, id: string, error: string, retryInSeconds: number | undefined): Promise<void> {
  await db
    .updateTable('email_outbox')
    .set({
      status: retryInSeconds === undefined ? 'failed' : 'pending',
      last_error: error,
      claimed_until: null,
      ...(retryInSeconds === undefined ? {} : { next_attempt_at: sql<Date>`now() + make_interval(secs => ${retryInSeconds})` }),
    })
    .where('id', '=', id)
    .execute();
}

/** For the metrics: mails waiting to be sent, and how long the oldest has waited. */
export async function mailQueueStats(db: Kysely<Database>): Promise<{ count: number; oldestAgeSeconds: number }> {
  const row = await sql<{ queued: string; oldest: Date | null }>`
    select count(*) as queued, min(created_at) as oldest from email_outbox where status = 'pending'`.execute(db);
  const oldest = row.rows[0]?.oldest;
  return { count: Number(row.rows[0]?.queued ?? 0), oldestAgeSeconds: oldest ? Math.max(0, (Date.now() - new Date(oldest).getTime()) / 1000) : 0 };
}
