import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../src/db/tables.js';
import { settleDelivery } from '../../src/events/webhook-repository.js';
import { settleImportRun } from '../../src/imports/import-repository.js';
import type { Outcome, Settlement } from '../../src/jobs/work-queue.js';
import { settleMail } from '../../src/mail/mail-outbox.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * Each queue's settle is its owning area's (jobs/ names no table): every one must keep the work
 * queue's rules, so they are checked alike here. A settle under a claim that another instance
 * has since taken over writes nothing; under its own claim it ends the claim, keeps the error, sets
 * its area's status for the outcome and, on a retry, the next attempt's time.
 */
interface QueueUnderTest {
  name: string;
  table: 'email_outbox' | 'webhook_deliveries' | 'variant_imports';
  statuses: Record<Outcome, string>;
  /** A row of the queue, claimed with `claimToken`; its id. */
  insertClaimed(db: Kysely<Database>, claimToken: string): Promise<string>;
  settle(trx: Transaction<Database>, row: { id: string; claim_token: string }, settlement: Settlement<never>): Promise<boolean>;
}

const QUEUES: QueueUnderTest[] = [
  {
    name: 'the email outbox (mail/)',
    table: 'email_outbox',
    statuses: { done: 'sent', retry: 'pending', failed: 'failed' },
    insertClaimed: async (db, claimToken) => {
      const id = randomUUID();
      await sql`insert into email_outbox (id, to_address, subject, text_body, html_body, status, attempts, next_attempt_at, created_at, claimed_until, claim_token)
        values (${id}, 'ada@example.com', 'Hello', 't', 'h', 'pending', 1, now(), now(), now() + interval '1 minute', ${claimToken})`.execute(db);
      return id;
    },
    settle: (trx, row, settlement) => settleMail(trx, row as never, settlement),
  },
  {
    name: 'webhook deliveries (events/)',
    table: 'webhook_deliveries',
    statuses: { done: 'succeeded', retry: 'pending', failed: 'failed' },
    insertClaimed: async (db, claimToken) => {
      const [webhookId, eventId, id] = [randomUUID(), randomUUID(), randomUUID()];
      await sql`insert into webhooks (id, url, events, secret, created_at, updated_at) values (${webhookId}, 'https://example.com/hook', '{user.created}', 'whsec', now(), now())`.execute(db);
      await sql`insert into events (id, type, created_at, subject_type, subject_id, data) values (${eventId}, 'user.created', now(), 'user', ${randomUUID()}, '{}')`.execute(db);
      await sql`insert into webhook_deliveries (id, webhook_id, event_id, status, next_attempt_at, created_at, claimed_until, claim_token)
        values (${id}, ${webhookId}, ${eventId}, 'pending', now(), now(), now() + interval '1 minute', ${claimToken})`.execute(db);
      return id;
    },
    settle: (trx, row, settlement) => settleDelivery(trx, row as never, settlement),
  },
  {
    name: 'variant imports (imports/)',
    table: 'variant_imports',
    statuses: { done: 'succeeded', retry: 'pending', failed: 'failed' },
    insertClaimed: async (db, claimToken) => {
      const [uploadId, id] = [randomUUID(), randomUUID()];
      const user = await db.selectFrom('users').select('id').executeTakeFirstOrThrow();
      await sql`insert into variant_imports (id, upload_id, status, format, mode, on_error, dry_run, byte_size, created_by, actor_type, created_at, next_attempt_at, claimed_until, claim_token)
        values (${id}, ${uploadId}, 'running', 'csv', 'upsert', 'reject_all', false, 1, ${user.id}, 'user', now(), now(), now() + interval '1 minute', ${claimToken})`.execute(db);
      return id;
    },
    settle: (trx, row, settlement) => settleImportRun(trx, row as never, settlement),
  },
];

describe("each queue's settle, supplied by the area that owns its table", () => {
  let testApp: TestApp;
  before(async () => {
    testApp = await buildTestApp({ environment: { ADMIN_EMAIL: 'settles@example.com', ADMIN_PASSWORD: 'settles-password-1' } });
    // Only the test settles: no loop of the app claims the rows it writes.
    await testApp.jobs.stop();
  });
  after(() => testApp.close());

  for (const queue of QUEUES) {
    it(`${queue.name}: nothing under a claim taken over; under its own, the status of each outcome, the claim ended`, async () => {
      const { db } = testApp;
      const read = (id: string) =>
        sql<{ status: string; claim_token: string | null; claimed_until: Date | null; last_error: string | null; due_in: number }>`
          select status, claim_token, claimed_until, last_error, extract(epoch from next_attempt_at - now())::integer as due_in from ${sql.table(queue.table)} where id = ${id}`
          .execute(db)
          .then((result) => result.rows[0]!);
      for (const outcome of ['done', 'retry', 'failed'] as const) {
        const claim = randomUUID();
        const id = await queue.insertClaimed(db, claim);
        const before = await read(id);
        const settlement = { outcome, error: outcome === 'done' ? null : 'HTTP 503', retryDelaySeconds: outcome === 'retry' ? 600 : undefined };
        const stale = await db.transaction().execute((trx) => queue.settle(trx, { id, claim_token: randomUUID() }, settlement));
        assert.equal(stale, false, `${outcome}: a claim taken over settles nothing`);
        assert.deepEqual(await read(id), before);
        const settled = await db.transaction().execute((trx) => queue.settle(trx, { id, claim_token: claim }, settlement));
        assert.equal(settled, true);
        const row = await read(id);
        assert.deepEqual([row.status, row.claim_token, row.claimed_until, row.last_error], [queue.statuses[outcome], null, null, settlement.error]);
        if (outcome === 'retry') assert.ok(row.due_in > 500 && row.due_in <= 600, `the retry is due after its pause (${row.due_in} s)`);
      }
    });
  }
});
