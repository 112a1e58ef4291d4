import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, EmailRow } from '../db/tables.js';
import { settledColumns, type Outcome, type Settlement } from '../jobs/work-queue.js';

export interface Mail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** Queues a mail in the caller's transaction: it is sent only if the change it reports commits. */
export async function queueMail(trx: Transaction<Database>, mail: Mail): Promise<void> {
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

/** Sent mails are kept a week (for support: to whom, what subject, when), without their bodies. */
export async function purgeSentMails(db: Kysely<Database>): Promise<number> {
  const result = await db.deleteFrom('email_outbox').where('status', '=', 'sent').where('sent_at', '<', sql<Date>`now() - interval '7 days'`).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** An erasure: every mail to these addresses goes, queued or sent (their bodies name the person). */
export async function forgetMailTo(trx: Transaction<Database>, addresses: string[]): Promise<void> {
  if (addresses.length === 0) return;
  await trx.deleteFrom('email_outbox').where(sql<string>`lower(to_address)`, 'in', addresses.map((address) => address.toLowerCase())).execute();
}

/** What a sent mail's row keeps: when it went, and no longer its bodies. */
export interface SentMailColumns {
  sent_at: Date;
  text_body: string;
  html_body: string;
}

const MAIL_STATUS = { done: 'sent', retry: 'pending', failed: 'failed' } as const satisfies Record<Outcome, EmailRow['status']>;

/** A send's result, under the claim it was made with (the outbox's settle on the work queue). */
export async function settleMail(trx: Transaction<Database>, mail: EmailRow, settlement: Settlement<SentMailColumns>): Promise<boolean> {
  const settled = await trx
    .updateTable('email_outbox')
    .set({ ...settledColumns(settlement), status: MAIL_STATUS[settlement.outcome], ...settlement.columns })
    .where('id', '=', mail.id)
    .where('claim_token', '=', mail.claim_token)
    .returning('id')
    .executeTakeFirst();
  return settled !== undefined;
}
