import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { Webhook } from 'standardwebhooks';
import { queueStats } from '../../src/jobs/work-queue.js';
import { isBlockedAddress, refuseWebhookUrl } from '../../src/events/webhook-url-guard.js';
import { buildTestApp, createUser, loginAdmin, problemOf, uniqueEmail, type Session, type TestApp } from '../helpers/test-app.js';
import { eventually } from '../helpers/eventually.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

const WEBHOOK_ENVIRONMENT = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' };


describe('events: every committed change recorded once, and nothing else', () => {
  let testApp: TestApp;
  let admin: Session;
  before(async () => {
    testApp = await buildTestApp({ environment: WEBHOOK_ENVIRONMENT });
    admin = await loginAdmin(testApp.app);
  });
  after(() => testApp.close());

  const inject = (request: InjectOptions) => testApp.app.inject(request);
  const eventsAbout = async (subjectId: string) =>
    (await testApp.db.selectFrom('events').selectAll().where('subject_id', '=', subjectId).orderBy('created_at').orderBy('id').execute()).map(
      (row) => ({ type: row.type, actor_id: row.actor_id, data: row.data }),
    );

  it('records each user change with its actor, request id, before/after and reason', async () => {
    const email = uniqueEmail();
    const registered = await inject({ method: 'POST', url: '/api/auth/register', headers: { 'x-request-id': 'register-1' }, payload: { email, password: 'password-123', name: 'Eve' } });
    const userId = registered.json().id;
    const user = await createUser(testApp.app, { email: uniqueEmail() }).then(() => undefined);
    assert.equal(user, undefined);
    const login = await inject({ method: 'POST', url: '/api/auth/login', payload: { email, password: 'password-123' } });
    const auth = { authorization: `Bearer ${login.json().access_token}` };
    await inject({ method: 'PATCH', url: '/api/users/profile', headers: auth, payload: { name: 'Eve Two' } });
    await inject({ method: 'PATCH', url: '/api/users/profile', headers: auth, payload: {} });
    await inject({ method: 'PUT', url: `/api/users/${userId}/role`, headers: admin.auth, payload: { role: 'manager', reason: 'Promoted' } });
    await inject({ method: 'PUT', url: `/api/users/${userId}/balance`, headers: admin.auth, payload: { delta: 500, reason: 'Goodwill' } });
    const refused = await inject({ method: 'PUT', url: `/api/users/${userId}/balance`, headers: admin.auth, payload: { delta: -5000, reason: 'Too much' } });
    assert.equal(refused.statusCode, 409);
    await inject({ method: 'PUT', url: `/api/users/${userId}/status`, headers: admin.auth, payload: { status: 'suspended', reason: 'Review' } });
    await inject({ method: 'PUT', url: `/api/users/${userId}/status`, headers: admin.auth, payload: { status: 'active' } });
    const again = await inject({ method: 'POST', url: '/api/auth/login', payload: { email, password: 'password-123' } });
    const againAuth = { authorization: `Bearer ${again.json().access_token}` };
    await inject({ method: 'PUT', url: '/api/users/change-password', headers: againAuth, payload: { current_password: 'password-123', new_password: 'password-456' } });
    const third = await inject({ method: 'POST', url: '/api/auth/login', payload: { email, password: 'password-456' } });
    await inject({ method: 'POST', url: '/api/auth/logout', payload: { refresh_token: third.json().refresh_token } });
    await inject({ method: 'POST', url: '/api/auth/logout', payload: { refresh_token: third.json().refresh_token } });
    await inject({ method: 'DELETE', url: `/api/users/${userId}?reason=Closed`, headers: admin.auth });

    const events = await eventsAbout(userId);
    assert.deepEqual(
      events.map((event) => event.type),
      [
        'user.registered',
        'user.updated',
        'user.role_changed',
        'user.balance_changed',
        'user.status_changed',
        'user.status_changed',
        'user.password_changed',
        'user.sessions_ended',
        'user.deleted',
      ],
      'one per change; nothing for {}, a refused change or a logout that revoked nothing',
    );
    const [registeredEvent, updated, role, balance, suspended] = events;
    assert.equal(registeredEvent!.actor_id, userId, 'a registration is its user\'s own act');
    assert.deepEqual(updated!.data, { before: { name: 'Eve' }, after: { name: 'Eve Two' } });
    assert.deepEqual(role!.data, { before: { role: 'user' }, after: { role: 'manager' }, reason: 'Promoted' });
    assert.equal(role!.actor_id, admin.id);
    assert.deepEqual(balance!.data, { before: { balance: 0 }, after: { balance: 500 }, delta: 500, balance_after: 500, currency: 'USD', reason: 'Goodwill' });
    assert.deepEqual(suspended!.data, { before: { status: 'active' }, after: { status: 'suspended' }, sessions_ended: true, reason: 'Review' });
    const requestIds = await testApp.db.selectFrom('events').select('request_id').where('subject_id', '=', userId).where('type', '=', 'user.registered').execute();
    assert.deepEqual(requestIds, [{ request_id: 'register-1' }]);
  });

  it('records variant changes, one per operation of a batch, and nothing for a batch that rolled back', async () => {
    const created = await inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: { product_id: 'ev-1', sku: `EV-${randomUUID().slice(0, 8)}`, name: 'E', price: 1 } });
    const id = created.json().id;
    await inject({ method: 'PATCH', url: `/api/variants/${id}`, headers: admin.auth, payload: { price: 2 } });
    const before = await testApp.db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const failed = await inject({
      method: 'POST',
      url: '/api/variants/batch',
      headers: admin.auth,
      payload: { operations: [{ op: 'create', variant: { product_id: 'ev-2', sku: `EV-${randomUUID().slice(0, 8)}`, name: 'E', price: 1 } }, { op: 'delete', id: randomUUID() }] },
    });
    assert.equal(failed.statusCode, 404);
    const afterwards = await testApp.db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    assert.equal(Number(afterwards.n), Number(before.n), 'no event for a change that rolled back');
    await inject({ method: 'DELETE', url: `/api/variants/${id}`, headers: admin.auth });
    const events = await eventsAbout(id);
    assert.deepEqual(events.map((event) => event.type), ['variant.created', 'variant.updated', 'variant.deleted']);
    assert.deepEqual(events[1]!.data, { before: { price: 1 }, after: { price: 2 } });
  });

  it('never stores a password, hash, token or secret in any event', async () => {
    const webhook = await inject({ method: 'POST', url: '/api/webhooks', headers: admin.auth, payload: { url: 'http://127.0.0.1:9/never', events: ['*'] } });
    const secret = webhook.json().secret;
    await inject({ method: 'DELETE', url: `/api/webhooks/${webhook.json().id}`, headers: admin.auth });
    const everything = JSON.stringify(await testApp.db.selectFrom('events').select('data').execute());
    assert.doesNotMatch(everything, /password|hash|token|secret/i);
    for (const value of ['password-123', 'password-456', secret, admin.accessToken, admin.refreshToken]) assert.ok(!everything.includes(value));
  });

  it('purges events older than EVENT_RETENTION_DAYS in its background job', async () => {
    const old = randomUUID();
    await testApp.db
      .insertInto('events')
      .values({ id: old, type: 'user.updated', created_at: new Date(Date.now() - 366 * 24 * 3600 * 1000), actor_id: null, request_id: null, subject_type: 'user', subject_id: randomUUID(), data: '{}' })
      .execute();
    await testApp.jobs.runNow('purge-events');
    assert.equal(await testApp.db.selectFrom('events').select('id').where('id', '=', old).executeTakeFirst(), undefined);
    assert.ok((await testApp.db.selectFrom('events').select('id').limit(1).executeTakeFirst()) !== undefined, 'recent events stay');
  });

  it('serves the audit log to admins: filters by type, subject, actor and time, in pages', async () => {
    const user = await createUser(testApp.app);
    await inject({ method: 'PUT', url: `/api/users/${user.id}/role`, headers: admin.auth, payload: { role: 'manager' } });
    await inject({ method: 'PUT', url: `/api/users/${user.id}/status`, headers: admin.auth, payload: { status: 'suspended' } });
    const list = async (query: string) => {
      const response = await inject({ method: 'GET', url: `/api/events?${query}`, headers: admin.auth });
      assert.equal(response.statusCode, 200, response.body);
      return response.json();
    };
    const about = await list(`subject_id=${user.id}&include_total=true`);
    assert.deepEqual(about.items.map((item: { type: string }) => item.type), ['user.status_changed', 'user.role_changed', 'user.registered']);
    assert.equal(about.total, 3);
    const statusOnly = await list(`subject_id=${user.id}&type=user.status_changed,user.deleted`);
    assert.equal(statusOnly.items.length, 1);
    const byAdmin = await list(`actor_id=${admin.id}&subject_id=${user.id}`);
    assert.equal(byAdmin.items.length, 2);
    const newest = about.items[0];
    const window = await list(`subject_id=${user.id}&since=${encodeURIComponent(about.items[1].occurred_at)}&until=${encodeURIComponent(newest.occurred_at)}`);
    assert.deepEqual(window.items.map((item: { type: string }) => item.type), ['user.role_changed']);
    const first = await list(`subject_id=${user.id}&limit=2`);
    const second = await list(`subject_id=${user.id}&limit=2&cursor=${first.next_cursor}`);
    assert.deepEqual([...first.items, ...second.items].map((item: { id: string }) => item.id), about.items.map((item: { id: string }) => item.id));
    const one = await inject({ method: 'GET', url: `/api/events/${newest.id}`, headers: admin.auth });
    assert.deepEqual(one.json(), newest);
    assert.equal((await inject({ method: 'GET', url: `/api/events/${randomUUID()}`, headers: admin.auth })).statusCode, 404);
    const badType = await inject({ method: 'GET', url: '/api/events?type=user.nope', headers: admin.auth });
    assert.equal(badType.statusCode, 400);
    const manager = await createUser(testApp.app, { role: 'manager', admin });
    assert.equal(problemOf(await inject({ method: 'GET', url: '/api/events', headers: manager.auth })).code, 'forbidden');
  });
});

describe('webhooks: administered by admins, delivered signed', () => {
  let testApp: TestApp;
  let admin: Session;
  let receiver: WebhookReceiver;
  let receiverUrl: string;
  before(async () => {
    testApp = await buildTestApp({ environment: WEBHOOK_ENVIRONMENT });
    admin = await loginAdmin(testApp.app);
    receiver = new WebhookReceiver();
    receiverUrl = await receiver.start();
  });
  after(async () => {
    await receiver.stop();
    await testApp.close();
  });
  const inject = (request: InjectOptions) => testApp.app.inject(request);
  const delivery = (eventId: string) =>
    testApp.db.selectFrom('webhook_deliveries').selectAll().where('event_id', '=', eventId).executeTakeFirst();

  it('creates a webhook with a secret shown once, then lists and reads it without', async () => {
    const created = await inject({ method: 'POST', url: '/api/webhooks', headers: admin.auth, payload: { url: receiverUrl, events: ['variant.created'], description: ' Search ' } });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.headers['cache-control'], 'no-store');
    assert.match(created.json().secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(created.headers.location, `/api/webhooks/${created.json().id}`);
    assert.equal(created.json().description, 'Search');
    const read = await inject({ method: 'GET', url: `/api/webhooks/${created.json().id}`, headers: admin.auth });
    assert.equal(read.json().secret, undefined);
    assert.equal(read.headers.etag, '"1"');
    const list = await inject({ method: 'GET', url: '/api/webhooks', headers: admin.auth });
    assert.ok(list.json().items.every((item: Record<string, unknown>) => !('secret' in item)));
    const stale = await inject({ method: 'PUT', url: `/api/webhooks/${created.json().id}`, headers: { ...admin.auth, 'if-match': '"7"' }, payload: { url: receiverUrl, events: ['*'], enabled: false } });
    assert.equal(stale.statusCode, 412);
    const updated = await inject({ method: 'PUT', url: `/api/webhooks/${created.json().id}`, headers: admin.auth, payload: { url: receiverUrl, events: ['*'], enabled: false } });
    assert.equal(updated.json().enabled, false);
    const removed = await inject({ method: 'DELETE', url: `/api/webhooks/${created.json().id}`, headers: admin.auth });
    assert.equal(removed.statusCode, 204);
    const types = (await testApp.db.selectFrom('events').select('type').where('subject_id', '=', created.json().id).orderBy('created_at').execute()).map((row) => row.type);
    assert.deepEqual(types, ['webhook.created', 'webhook.updated', 'webhook.deleted']);
    const user = await createUser(testApp.app);
    assert.equal((await inject({ method: 'GET', url: '/api/webhooks', headers: user.auth })).statusCode, 403);
  });

  it('POSTs each subscribed event with Standard Webhooks headers and a signature an independent library verifies', async () => {
    receiver.answer = () => 204;
    const created = await inject({ method: 'POST', url: '/api/webhooks', headers: admin.auth, payload: { url: receiverUrl, events: ['variant.created'] } });
    const { id: webhookId, secret } = created.json();
    const sku = `HOOK-${randomUUID().slice(0, 8)}`;
    const variant = await inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: { product_id: 'hook', sku, name: 'Hooked', price: 5 } });
    await inject({ method: 'PATCH', url: `/api/variants/${variant.json().id}`, headers: admin.auth, payload: { price: 6 } });
    const event = await testApp.db.selectFrom('events').selectAll().where('subject_id', '=', variant.json().id).where('type', '=', 'variant.created').executeTakeFirstOrThrow();
    const received = await eventually(async () => receiver.received.find((item) => item.headers['webhook-id'] === event.id), 'the delivery');
    const verified = new Webhook(secret).verify(received.body, {
      'webhook-id': String(received.headers['webhook-id']),
      'webhook-timestamp': String(received.headers['webhook-timestamp']),
      'webhook-signature': String(received.headers['webhook-signature']),
    }) as { id: string; type: string; data: { after: { sku: string } } };
    assert.equal(verified.id, event.id);
    assert.equal(verified.type, 'variant.created');
    assert.equal(verified.data.after.sku, sku);
    assert.match(String(received.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]+=*$/);
    assert.ok(Math.abs(Number(received.headers['webhook-timestamp']) - Date.now() / 1000) < 30);
    const stored = await eventually(async () => {
      const row = await delivery(event.id);
      return row?.status === 'succeeded' ? row : undefined;
    }, 'the delivery to be marked');
    assert.equal(stored.attempts, 1);
    assert.equal(stored.last_status_code, 204);
    assert.equal(receiver.received.filter((item) => String(item.body).includes('variant.updated')).length, 0, 'unsubscribed types are not sent');
    const deliveries = await inject({ method: 'GET', url: `/api/webhooks/${webhookId}/deliveries`, headers: admin.auth });
    assert.deepEqual(
      deliveries.json().items.map((item: { event_type: string; status: string }) => [item.event_type, item.status]),
      [['variant.created', 'succeeded']],
    );
    await inject({ method: 'DELETE', url: `/api/webhooks/${webhookId}`, headers: admin.auth });
  });

  it("queues a reservation commit's events (two variants, no reference), each to the webhooks its type reaches, with its caller and request", async () => {
    receiver.answer = () => 204;
    const hook = async (events: string[], enabled = true) => {
      const created = await inject({ method: 'POST', url: '/api/webhooks', headers: admin.auth, payload: { url: receiverUrl, events } });
      assert.equal(created.statusCode, 201, created.body);
      if (!enabled) assert.equal((await inject({ method: 'PUT', url: `/api/webhooks/${created.json().id}`, headers: admin.auth, payload: { url: receiverUrl, events, enabled } })).statusCode, 200);
      return created.json().id as string;
    };
    const both = await hook(['reservation.committed', 'variant.stock_changed']);
    const stockOnly = await hook(['variant.stock_changed']);
    const everything = await hook(['*']);
    const disabled = await hook(['*'], false);
    try {
      // Two variants and no reference: each variant's update records its own event, the reservation's goes with the first.
      const newVariant = async (stock: number) => {
        const created = await inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: { product_id: `held-${randomUUID()}`, sku: `RES-${randomUUID().slice(0, 8)}`, name: 'Held', price: 5, stock } });
        assert.equal(created.statusCode, 201, created.body);
        return created.json().id as string;
      };
      const [first, second] = [await newVariant(4), await newVariant(9)];
      const reservation = await inject({ method: 'POST', url: '/api/reservations', headers: admin.auth, payload: { lines: [{ variant_id: first, quantity: 3 }, { variant_id: second, quantity: 2 }] } });
      assert.equal(reservation.statusCode, 201, reservation.body);
      const committed = await inject({ method: 'POST', url: `/api/reservations/${reservation.json().id}/commit`, headers: admin.auth });
      assert.equal(committed.statusCode, 200, committed.body);
      const commitEvents = await testApp.db
        .selectFrom('events')
        .select(['id', 'type', 'subject_id', 'data', 'actor_id', 'actor_type', 'request_id'])
        .where((eb) => eb.or([eb('subject_id', '=', reservation.json().id).and('type', '=', 'reservation.committed'), eb('subject_id', 'in', [first, second]).and('type', '=', 'variant.stock_changed')]))
        .execute();
      assert.deepEqual(commitEvents.map((event) => event.type).sort(), ['reservation.committed', 'variant.stock_changed', 'variant.stock_changed']);
      const stockData = (variantId: string) => commitEvents.find((event) => event.subject_id === variantId)!.data;
      // Section 21: the movement's location beside it (the default: a shop with one location).
      const atDefault = (await testApp.db.selectFrom('locations').select('id').where('is_default', '=', true).executeTakeFirstOrThrow()).id;
      assert.deepEqual(stockData(first), { before: { stock: 4, reserved: 3 }, after: { stock: 1, reserved: 0 }, delta: -3, stock_after: 1, location_id: atDefault, reason: 'reservation committed', reference: null });
      assert.deepEqual(stockData(second), { before: { stock: 9, reserved: 2 }, after: { stock: 7, reserved: 0 }, delta: -2, stock_after: 7, location_id: atDefault, reason: 'reservation committed', reference: null });
      const adminId = (await inject({ method: 'GET', url: '/api/users/profile', headers: admin.auth })).json().id;
      const requestId = commitEvents[0]!.request_id;
      for (const event of commitEvents) assert.deepEqual([event.actor_id, event.actor_type, event.request_id], [adminId, 'user', requestId], 'every event of the commit names its caller and request');
      assert.equal(requestId, committed.headers['x-request-id']);
      const queued = await testApp.db
        .selectFrom('webhook_deliveries')
        .innerJoin('events', 'events.id', 'webhook_deliveries.event_id')
        .select(['webhook_deliveries.webhook_id', 'events.type'])
        .where('webhook_deliveries.event_id', 'in', commitEvents.map((event) => event.id))
        .execute();
      const to = (webhookId: string) => queued.filter((row) => row.webhook_id === webhookId).map((row) => row.type).sort();
      assert.deepEqual(to(both), ['reservation.committed', 'variant.stock_changed', 'variant.stock_changed']);
      assert.deepEqual(to(stockOnly), ['variant.stock_changed', 'variant.stock_changed']);
      assert.deepEqual(to(everything), ['reservation.committed', 'variant.stock_changed', 'variant.stock_changed']);
      assert.deepEqual(to(disabled), [], 'a disabled webhook gets nothing');
    } finally {
      for (const webhookId of [both, stockOnly, everything, disabled]) await inject({ method: 'DELETE', url: `/api/webhooks/${webhookId}`, headers: admin.auth });
    }
  });

  it('retries a delivery that got a 500 and one that timed out, on the schedule', { timeout: 60_000 }, async () => {
    const created = await inject({ method: 'POST', url: '/api/webhooks', headers: admin.auth, payload: { url: receiverUrl, events: ['user.role_changed'] } });
    const user = await createUser(testApp.app);
    let calls = 0;
    receiver.answer = () => (++calls === 1 ? 500 : calls === 2 ? 'hang' : 200);
    const started = Date.now();
    await inject({ method: 'PUT', url: `/api/users/${user.id}/role`, headers: admin.auth, payload: { role: 'manager' } });
    const event = await testApp.db.selectFrom('events').selectAll().where('subject_id', '=', user.id).where('type', '=', 'user.role_changed').executeTakeFirstOrThrow();
    const afterFailure = await eventually(async () => {
      const row = await delivery(event.id);
      return row?.last_status_code === 500 ? row : undefined;
    }, 'the first attempt');
    assert.equal(afterFailure.status, 'pending');
    const pause = new Date(afterFailure.next_attempt_at).getTime() - Date.now();
    assert.ok(pause > 2000 && pause <= 5500, `the second attempt is about 5 s later (${pause} ms)`);
    const afterTimeout = await eventually(async () => {
      const row = await delivery(event.id);
      return row && row.attempts === 2 && row.claimed_until === null ? row : undefined;
    }, 'the second attempt to time out', 25_000);
    assert.match(String(afterTimeout.last_error), /no answer within 10 s/);
    assert.ok(Date.now() - started >= 10_000, 'the send waited 10 s before giving up');
    const pauseAfterTimeout = new Date(afterTimeout.next_attempt_at).getTime() - Date.now();
    assert.ok(pauseAfterTimeout > 20_000 && pauseAfterTimeout <= 30_500, `the third attempt is about 30 s later (${pauseAfterTimeout} ms)`);
    // Time passes: the retry falls due now.
    await testApp.db.updateTable('webhook_deliveries').set({ next_attempt_at: new Date() }).where('event_id', '=', event.id).execute();
    const done = await eventually(async () => {
      const row = await delivery(event.id);
      return row?.status === 'succeeded' ? row : undefined;
    }, 'the third attempt');
    assert.equal(done.attempts, 3);
    await inject({ method: 'DELETE', url: `/api/webhooks/${created.json().id}`, headers: admin.auth });
  });

  it('does not follow a redirect, and reports the queue of due deliveries', async () => {
    receiver.answer = () => 302;
    const created = await inject({ method: 'POST', url: '/api/webhooks', headers: admin.auth, payload: { url: receiverUrl, events: ['user.role_changed'] } });
    const user = await createUser(testApp.app);
    await inject({ method: 'PUT', url: `/api/users/${user.id}/role`, headers: admin.auth, payload: { role: 'manager' } });
    const event = await testApp.db.selectFrom('events').selectAll().where('subject_id', '=', user.id).where('type', '=', 'user.role_changed').executeTakeFirstOrThrow();
    const redirected = await eventually(async () => {
      const row = await delivery(event.id);
      return row?.last_status_code === 302 ? row : undefined;
    }, 'the attempt');
    assert.equal(redirected.status, 'pending', 'a 3xx is not a delivery');
    assert.equal(receiver.received.filter((item) => item.headers['webhook-id'] === event.id).length, 1, 'nothing followed the redirect');
    await testApp.db.updateTable('webhook_deliveries').set({ next_attempt_at: new Date(Date.now() - 60_000) }).where('event_id', '=', event.id).execute();
    const stats = await queueStats(testApp.db, 'webhook_deliveries');
    assert.ok(stats.count >= 1 && stats.oldestAgeSeconds >= 59, JSON.stringify(stats));
    await inject({ method: 'DELETE', url: `/api/webhooks/${created.json().id}`, headers: admin.auth });
  });

  it('gives up after the last retry, and disables a webhook whose deliveries failed for 3 days', async () => {
    receiver.answer = () => 503;
    const created = await inject({ method: 'POST', url: '/api/webhooks', headers: admin.auth, payload: { url: receiverUrl, events: ['user.role_changed'] } });
    const webhookId = created.json().id;
    const user = await createUser(testApp.app);
    await inject({ method: 'PUT', url: `/api/users/${user.id}/role`, headers: admin.auth, payload: { role: 'manager' } });
    const event = await testApp.db.selectFrom('events').selectAll().where('subject_id', '=', user.id).where('type', '=', 'user.role_changed').executeTakeFirstOrThrow();
    // Seven attempts have failed over three days already; the eighth is due.
    await testApp.db.updateTable('webhook_deliveries').set({ attempts: 7, next_attempt_at: new Date() }).where('event_id', '=', event.id).execute();
    await testApp.db.updateTable('webhooks').set({ failing_since: new Date(Date.now() - 3 * 24 * 3600 * 1000 - 1000) }).where('id', '=', webhookId).execute();
    const failed = await eventually(async () => {
      const row = await delivery(event.id);
      return row?.status === 'failed' ? row : undefined;
    }, 'the last attempt');
    assert.equal(failed.attempts, 8);
    const webhook = await inject({ method: 'GET', url: `/api/webhooks/${webhookId}`, headers: admin.auth });
    assert.equal(webhook.json().enabled, false);
    const disabled = await testApp.db.selectFrom('events').selectAll().where('subject_id', '=', webhookId).where('type', '=', 'webhook.disabled').execute();
    assert.equal(disabled.length, 1);
    assert.equal(disabled[0]!.actor_id, null, "the service's own change");
  });
});

describe('webhooks: no request forgery', () => {
  it('refuses webhook URLs that are not https or that resolve to private addresses, at creation', async () => {
    const testApp = await buildTestApp();
    try {
      const admin = await loginAdmin(testApp.app);
      for (const url of ['https://127.0.0.1/hook', 'https://[::1]/hook', 'https://10.1.2.3/hook', 'https://169.254.169.254/latest', 'https://[::ffff:127.0.0.1]/hook', 'https://localhost/hook', 'http://example.com/hook']) {
        const response = await testApp.app.inject({ method: 'POST', url: '/api/webhooks', headers: admin.auth, payload: { url, events: ['*'] } });
        assert.equal(response.statusCode, 400, url);
        const problem = problemOf(response);
        assert.equal(problem.code, 'validation_failed');
        assert.equal(problem.errors?.[0]?.path, '/url');
      }
    } finally {
      await testApp.close();
    }
  });

  it('checks the address again at every delivery', async () => {
    const testApp = await buildTestApp({ environment: { WEBHOOK_ALLOW_HTTP: 'true' } });
    const receiver = new WebhookReceiver();
    const receiverUrl = await receiver.start();
    try {
      const admin = await loginAdmin(testApp.app);
      // Registered while it resolved elsewhere; it points at a private address now.
      const now = new Date();
      await testApp.db
        .insertInto('webhooks')
        .values({ id: randomUUID(), url: receiverUrl, events: ['*'], description: null, enabled: true, secret: 'whsec_c2VjcmV0', created_at: now, updated_at: now })
        .execute();
      const user = await createUser(testApp.app);
      await testApp.app.inject({ method: 'PUT', url: `/api/users/${user.id}/role`, headers: admin.auth, payload: { role: 'manager' } });
      const refused = await eventually(async () => {
        const row = await testApp.db.selectFrom('webhook_deliveries').selectAll().where('attempts', '>', 0).executeTakeFirst();
        return row?.last_error ? row : undefined;
      }, 'a refused attempt');
      assert.match(String(refused.last_error), /loopback, private, link-local, reserved or other address that is not global unicast/);
      assert.equal(receiver.received.length, 0, 'nothing was sent');
    } finally {
      await receiver.stop();
      await testApp.close();
    }
  });

  it('knows the ranges: loopback, private, link-local, unspecified, in IPv4, IPv6 and mapped forms', async () => {
    for (const address of ['127.0.0.1', '10.0.0.1', '172.16.5.4', '192.168.1.1', '169.254.169.254', '0.0.0.0', '::1', '::', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1']) {
      assert.equal(isBlockedAddress(address), true, address);
    }
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8']) assert.equal(isBlockedAddress(address), false, address);
    assert.equal(await refuseWebhookUrl('https://[::ffff:7f00:1]/x', { allowHttp: false, allowPrivateNetworks: false }), 'must not resolve to a loopback, private, link-local, reserved or other address that is not global unicast');
    assert.equal(await refuseWebhookUrl('https://user:pw@example.com/', { allowHttp: false, allowPrivateNetworks: true }), 'must not carry credentials');
  });
});
