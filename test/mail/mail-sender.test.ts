import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import { WorkQueue } from '../../src/jobs/work-queue.js';
import { queueMail } from '../../src/mail/mail-outbox.js';
import { createMailSender } from '../../src/mail/mail-sender.js';
import { eventually } from '../helpers/eventually.js';
import { SlowSmtpServer } from '../helpers/slow-smtp-server.js';
import { buildTestApp } from '../helpers/test-app.js';

const quiet = { warn: () => {}, info: () => {}, error: () => {} } as unknown as FastifyBaseLogger;

/**
 * The mail sender on its own work queue, with a deadline the test shortens, over an app's
 * database (the app has no SMTP_URL: its own sender does not run). A failed attempt is retried
 * at once, so the retry follows the failure as closely as the queue allows.
 */
async function sendOneMail(server: SlowSmtpServer, deadlineMs: number) {
  const testApp = await buildTestApp();
  const sender = createMailSender(await server.start(), 'shop@example.com', { deadlineMs });
  const queue = new WorkQueue(testApp.db, { ...sender.queue, retryDelaySeconds: () => 0 }, quiet);
  const close = async () => {
    await queue.stop();
    sender.close();
    await testApp.close();
    await server.stop();
  };
  try {
    await testApp.db.deleteFrom('email_outbox').execute();
    await testApp.db.transaction().execute((trx) => queueMail(trx, { to: 'slow@example.com', subject: 'Slow', text: 'the text', html: '<p>the html</p>' }));
    await queue.pass();
    const sent = await eventually(() => testApp.db.selectFrom('email_outbox').selectAll().where('status', '=', 'sent').executeTakeFirst(), 'the mail sent', 20_000);
    return { sent, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** API.md section 17, "Slow mail servers". */
describe('the mail sender and slow mail servers', () => {
  it('sends a mail once to a server that answers slowly but within the deadline', async () => {
    // Slow, but far within the deadline even on a loaded machine (the whole SMTP exchange must fit in it).
    const server = new SlowSmtpServer(() => 500);
    const { sent, close } = await sendOneMail(server, 10_000);
    try {
      assert.equal(sent.attempts, 1);
      assert.equal(server.kept.length, 1, 'received exactly once');
      assert.deepEqual(server.log.slice(0, 2), ['open 1', 'kept 1']);
    } finally {
      await close();
    }
  });

  it('destroys the connection of an attempt past its deadline before the next attempt opens one, so the mail is received once', async () => {
    // The first connection answers long after the deadline; the second at once.
    const server = new SlowSmtpServer((connection) => (connection === 1 ? 3000 : 0));
    const { sent, close } = await sendOneMail(server, 800);
    try {
      assert.equal(sent.attempts, 2, 'the first attempt failed at its deadline, the second sent the mail');
      assert.deepEqual(server.log.slice(0, 4), ['open 1', 'close 1', 'open 2', 'kept 2'], 'the first connection closed before the second opened');
      // Had the first connection lived on, its late answer would have kept the mail a second time.
      await eventually(() => server.log.includes('dropped 1') || undefined, "the first connection's answer coming due");
      assert.deepEqual(
        server.kept.map((mail) => mail.connection),
        [2],
        'received exactly once',
      );
    } finally {
      await close();
    }
  });
});
