import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database, EmailRow } from '../../src/db/tables.js';
import { WorkQueue, type QueueDefinition } from '../../src/jobs/work-queue.js';
import { queueMail, settleMail, type SentMailColumns } from '../../src/mail/mail-outbox.js';
import { buildTestApp, onPostgres, useTwoInstancesWithAdmin } from '../helpers/test-app.js';

const quiet = { warn: () => {}, info: () => {}, error: () => {} } as unknown as FastifyBaseLogger;

/** A queue over the email outbox whose attempts the test decides; nothing is sent anywhere. */
function outboxQueue(attempt: QueueDefinition<EmailRow, SentMailColumns>['attempt'], overrides: Partial<QueueDefinition<EmailRow, SentMailColumns>> = {}): QueueDefinition<EmailRow, SentMailColumns> {
  return { name: 'test-queue', table: 'email_outbox', settle: settleMail, deadlineMs: 300, leaseSeconds: 1, concurrency: 4, retryDelaySeconds: () => 60, attempt, ...overrides };
}

/** The app's own outbox loop stopped, so only the test's queue claims the rows it queues. */
const appWithoutJobs = async () => {
  const testApp = await buildTestApp();
  await testApp.jobs.stop();
  return testApp;
};

const queueSome = async (db: Kysely<Database>, count: number) => {
  for (let index = 0; index < count; index++) await db.transaction().execute((trx) => queueMail(trx, { to: `n${index}@example.com`, subject: 'Queued', text: 't', html: 'h' }));
};

describe('the work queue (jobs/work-queue.ts)', () => {
  it('refuses a lease that does not outlive the attempt twice over', async () => {
    const testApp = await buildTestApp();
    try {
      assert.throws(() => new WorkQueue(testApp.db, outboxQueue(async () => ({ ok: true }), { deadlineMs: 60_000, leaseSeconds: 60 }), quiet), /lease must be at least twice/);
    } finally {
      await testApp.close();
    }
  });

  it('cuts an attempt at its deadline and records it as a failure to retry, under its own claim', async () => {
    const testApp = await appWithoutJobs();
    try {
      const db = testApp.db;
      await db.deleteFrom('email_outbox').execute();
      await queueSome(db, 1);
      const queue = new WorkQueue(db, outboxQueue(() => new Promise(() => {})), quiet);
      assert.equal(await queue.pass(), 1);
      // stop, not drain: the slot the cut attempt frees would otherwise wake a pass as the app closes.
      await queue.stop();
      const [row] = await db.selectFrom('email_outbox').selectAll().execute();
      assert.equal(row!.status, 'pending');
      assert.equal(row!.attempts, 1);
      assert.equal(row!.claim_token, null);
      assert.match(String(row!.last_error), /no result within 0.3 s/);
      assert.ok(row!.next_attempt_at.getTime() > Date.now() + 50_000, 'due again after the retry pause');
    } finally {
      await testApp.close();
    }
  });

  it('does not wait for a batch: a slow attempt holds only its own slot', async () => {
    const testApp = await appWithoutJobs();
    try {
      const db = testApp.db;
      await db.deleteFrom('email_outbox').execute();
      await queueSome(db, 3);
      let releaseSlow!: () => void;
      const finished: string[] = [];
      const queue = new WorkQueue(
        db,
        outboxQueue(
          async (mail) => {
            if (mail.to_address === 'n0@example.com') await new Promise<void>((resolve) => (releaseSlow = resolve));
            finished.push(mail.to_address);
            return { ok: true };
          },
          { deadlineMs: 10_000, leaseSeconds: 30 },
        ),
        quiet,
      );
      await queue.pass();
      const sent = () => db.selectFrom('email_outbox').select('to_address').where('status', '=', 'sent').orderBy('to_address').execute();
      for (const deadline = Date.now() + 5000; (await sent()).length < 2 && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.deepEqual(finished.sort(), ['n1@example.com', 'n2@example.com'], 'the others finished while one hung');
      assert.deepEqual((await sent()).map((row) => row.to_address), ['n1@example.com', 'n2@example.com'], 'and their results are recorded');
      releaseSlow();
      await queue.stop();
    } finally {
      await testApp.close();
    }
  });
});

describe('the work queue and writes that commit during a pass (PostgreSQL)', { skip: !onPostgres && 'needs PostgreSQL: on PGlite the pass holds the one connection' }, () => {
  it('gives a caller who asks during a pass the pass after it, which sees what the caller committed', async () => {
    const testApp = await appWithoutJobs();
    try {
      const db = testApp.db;
      await db.deleteFrom('email_outbox').execute();
      // The claim runs on the database; its answer is held until the row below has committed.
      let claimRan!: () => void;
      const claimHasRun = new Promise<void>((resolve) => (claimRan = resolve));
      let releaseAnswer!: () => void;
      const answerReleased = new Promise<void>((resolve) => (releaseAnswer = resolve));
      let holding = true;
      const held = db.withPlugin({
        transformQuery: (query) => query.node,
        transformResult: async (result) => {
          if (holding) {
            holding = false;
            claimRan();
            await answerReleased;
          }
          return result.result;
        },
      });
      const queue = new WorkQueue(held, outboxQueue(async () => ({ ok: true })), quiet);
      const inProgress = queue.pass();
      await claimHasRun;
      await queueSome(db, 1);
      const asked = queue.pass();
      releaseAnswer();
      assert.equal(await inProgress, 0, 'the pass in progress read the table before the row committed');
      assert.equal(await asked, 1, 'the pass the caller got claimed it');
      await queue.stop();
      const [row] = await db.selectFrom('email_outbox').select(['status', 'attempts']).execute();
      assert.deepEqual(row, { status: 'sent', attempts: 1 });
    } finally {
      await testApp.close();
    }
  });
});

describe('the work queue on two instances (PostgreSQL)', { skip: !onPostgres && 'needs PostgreSQL' }, () => {
  const fixture = useTwoInstancesWithAdmin();

  it('attempts each row once, however many instances claim at once', async () => {
    const db = fixture.first.db;
    await db.deleteFrom('email_outbox').execute();
    await queueSome(db, 40);
    const attempts = new Map<string, number>();
    const attempt = async (mail: EmailRow) => {
      attempts.set(mail.id, (attempts.get(mail.id) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, 20));
      return { ok: true as const };
    };
    const queues = [fixture.first.db, fixture.second.db].map((instanceDb) => new WorkQueue(instanceDb, outboxQueue(attempt, { name: randomUUID(), deadlineMs: 5000, leaseSeconds: 30 }), quiet));
    await Promise.all([...queues.map((queue) => queue.pass()), ...queues.map((queue) => queue.pass())]);
    for (const deadline = Date.now() + 20_000; attempts.size < 40 && Date.now() < deadline; ) {
      await Promise.all(queues.map((queue) => queue.pass()));
      await Promise.all(queues.map((queue) => queue.drain()));
    }
    await Promise.all(queues.map((queue) => queue.stop()));
    assert.equal(attempts.size, 40);
    assert.deepEqual([...new Set(attempts.values())], [1], 'no row was attempted twice');
    const sent = await db.selectFrom('email_outbox').select('attempts').where('status', '=', 'sent').execute();
    assert.equal(sent.length, 40);
    assert.ok(sent.every((row) => row.attempts === 1));
  });
});
