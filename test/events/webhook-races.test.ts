import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { freePort, postJson, startService } from '../helpers/service-process.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, JWT_SECRET, buildTestApp, createScratchDatabase, loginAdmin, onPostgres } from '../helpers/test-app.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

const WEBHOOK_ENVIRONMENT = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' };

// PGlite is one connection in one process: instances that share a database need PostgreSQL.
describe('webhook delivery across instances (PostgreSQL)', { skip: !onPostgres && 'needs PostgreSQL' }, () => {
  it('delivers 500 events through two instances, each event once', { timeout: 120_000 }, async () => {
    const first = await buildTestApp({ environment: WEBHOOK_ENVIRONMENT });
    const second = await buildTestApp({ environment: WEBHOOK_ENVIRONMENT, databaseUrl: first.databaseUrl! });
    const receiver = new WebhookReceiver();
    const url = await receiver.start();
    try {
      const admin = await loginAdmin(first.app);
      const webhook = await first.app.inject({ method: 'POST', url: '/api/webhooks', headers: admin.auth, payload: { url, events: ['variant.created'] } });
      const secret = webhook.json().secret;
      for (let batch = 0; batch < 5; batch++) {
        const operations = Array.from({ length: 100 }, () => ({
          op: 'create',
          variant: { product_id: `race-${randomUUID()}`, sku: `RACE-${randomUUID()}`, name: 'Race', price: 1 },
        }));
        const app = batch % 2 ? second.app : first.app;
        assert.equal((await app.inject({ method: 'POST', url: '/api/variants/batch', headers: admin.auth, payload: { operations } })).statusCode, 200);
      }
      const pending = () =>
        first.db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '!=', 'succeeded').executeTakeFirstOrThrow();
      // Both instances' delivery loops run on their own; these passes only hurry them along.
      for (let round = 0; round < 200 && Number((await pending()).n) > 0; round++) {
        await Promise.all([first.jobs.runNow('deliver-webhooks'), second.jobs.runNow('deliver-webhooks')]);
      }
      assert.equal(Number((await pending()).n), 0, 'every delivery succeeded');
      const ids = receiver.received.map((delivery) => String(delivery.headers['webhook-id']));
      assert.equal(ids.length, 500, 'no event was sent twice');
      assert.equal(new Set(ids).size, 500, 'every event was sent');
      const verifier = new Webhook(secret);
      for (const delivery of receiver.received.slice(0, 20)) verifier.verify(delivery.body, delivery.headers as Record<string, string>);
      const attempts = await first.db.selectFrom('webhook_deliveries').select('attempts').distinct().execute();
      assert.deepEqual(attempts, [{ attempts: 1 }]);
    } finally {
      await receiver.stop();
      await second.app.close();
      await first.close();
    }
  });

  it('redelivers, from another instance, a delivery whose instance was killed mid-send', { timeout: 120_000 }, async () => {
    const scratch = await createScratchDatabase();
    const receiver = new WebhookReceiver();
    const url = await receiver.start();
    let survivor: Awaited<ReturnType<typeof buildTestApp>> | undefined;
    const environment = {
      ...WEBHOOK_ENVIRONMENT,
      DATABASE_URL: scratch.url,
      PORT: await freePort(),
      JWT_SECRET,
      ADMIN_EMAIL,
      ADMIN_PASSWORD,
    };
    const doomed = await startService(environment);
    try {
      receiver.answer = () => 'hang';
      const login = await postJson(`${doomed.baseUrl}/api/auth/login`, { email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
      const auth = { authorization: `Bearer ${login.body?.access_token}` };
      const webhook = await postJson(`${doomed.baseUrl}/api/webhooks`, { url, events: ['variant.created'] }, auth);
      const created = await postJson(`${doomed.baseUrl}/api/variants`, { product_id: 'kill', sku: `KILL-${randomUUID().slice(0, 8)}`, name: 'Kill', price: 1 }, auth);
      assert.equal(created.status, 201);
      for (let waited = 0; receiver.received.length === 0; waited += 50) {
        assert.ok(waited < 15_000, 'the first instance sent the delivery');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      doomed.child.kill('SIGKILL');
      await doomed.exited;

      receiver.answer = () => 204;
      survivor = await buildTestApp({ environment: WEBHOOK_ENVIRONMENT, databaseUrl: scratch.url });
      const eventId = String(receiver.received[0]!.headers['webhook-id']);
      const claimed = await survivor.db.selectFrom('webhook_deliveries').select(['claimed_until', 'status']).where('event_id', '=', eventId).executeTakeFirstOrThrow();
      assert.equal(claimed.status, 'pending');
      assert.ok(claimed.claimed_until && claimed.claimed_until.getTime() > Date.now(), 'the dead instance still holds the claim');
      // Its lease runs out (a minute): the row's time moves, nobody sleeps.
      await survivor.db.updateTable('webhook_deliveries').set({ claimed_until: new Date(Date.now() - 1000) }).where('event_id', '=', eventId).execute();
      let row;
      for (let waited = 0; ; waited += 100) {
        row = await survivor.db.selectFrom('webhook_deliveries').selectAll().where('event_id', '=', eventId).executeTakeFirstOrThrow();
        if (row.status === 'succeeded') break;
        assert.ok(waited < 30_000, 'the other instance took over once the claim lapsed');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.equal(row.attempts, 2);
      assert.deepEqual(receiver.received.map((delivery) => delivery.headers['webhook-id']), [eventId, eventId], 'at least once: the same event again');
      new Webhook(String(webhook.body?.secret)).verify(receiver.received[1]!.body, receiver.received[1]!.headers as Record<string, string>);
    } finally {
      doomed.child.kill('SIGKILL');
      await receiver.stop();
      await survivor?.app.close();
      await scratch.drop();
    }
  });
});
