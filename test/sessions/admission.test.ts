import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/db/tables.js';
import { buildApp } from '../../src/app.js';
import type { Access } from '../../src/sessions/admission.js';
import { inTransaction } from '../../src/db/transaction.js';
import { applyBalanceChange } from '../../src/users/balance-service.js';
import type { JobRunner } from '../../src/jobs/job-runner.js';
import { createScratchDatabase } from '../helpers/scratch-database.js';
import { createUser, loginAdmin, onPostgres, openTestDatabase, problemOf, testConfig, type Session } from '../helpers/test-app.js';

/**
 * Counts the statements the app sends (BEGIN and COMMIT aside), and which of them were the
 * caller's check alone (the caller's columns without a request's data beside them).
 */
class StatementCounter {
  count = 0;
  ownChecks = 0;
  /** For each statement: 'check' (the caller alone), 'fused' (the caller beside data) or 'data'. */
  kinds: string[] = [];
  seen = (text: string): void => {
    if (/^(begin|commit|rollback)/i.test(text)) return;
    const kind = text.includes('requested_rows') ? 'fused' : text.includes('caller__live') ? 'check' : 'data';
    if (kind === 'check') this.ownChecks++;
    this.kinds.push(kind);
    this.count++;
  };
  reset(): void {
    this.count = 0;
    this.ownChecks = 0;
    this.kinds = [];
  }
}

describe('the admission: the caller checked with the first statement of every request', () => {
  const counter = new StatementCounter();
  let app: FastifyInstance;
  let db: Kysely<Database>;
  let admin: Session;
  let customer: Session;
  let variantId: string;
  let drop: (() => Promise<void>) | undefined;
  before(async () => {
    const scratch = onPostgres ? await createScratchDatabase(process.env.DATABASE_URL!) : undefined;
    drop = scratch?.drop;
    const database = await openTestDatabase(scratch?.url, undefined, counter.seen);
    // A webhook's URL may name this machine, so that replacing one resolves no name over the network.
    const config = testConfig({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }, scratch?.url);
    db = database.db;
    let jobs: JobRunner;
    ({ app, jobs } = await buildApp({ config, database, logger: false, tellOperator: () => {} }));
    await app.ready();
    // Background loops would add their own statements to the count.
    await jobs.stop();
    admin = await loginAdmin(app);
    customer = await createUser(app);
    variantId = (await app.inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: { product_id: 'fused', sku: `F-${randomUUID()}`, name: 'F', price: 1, stock: 2 } })).json().id;
  });
  after(async () => {
    await app.close();
    await drop?.();
  });
  beforeEach(() => counter.reset());
  const get = (url: string, session: Session) => app.inject({ method: 'GET', url, headers: session.auth });
  // Straight into the table: a webhook made over HTTP would need its URL resolved.
  const insertWebhook = (id: string, url: string) =>
    db.insertInto('webhooks').values({ id, url, events: ['*'], description: null, enabled: true, secret: 'whsec_test', created_at: new Date(), updated_at: new Date() }).execute();

  it("answers every read of a caller with one statement, the caller, the session and the rows together, its second as its first", async () => {
    const webhookId = randomUUID();
    await insertWebhook(webhookId, 'https://hooks.example.com/in');
    // Reads of a page after its owner's row make one statement more: the owner's, with the caller.
    for (const [url, statements] of [
      [`/api/variants/${variantId}`, 1],
      ['/api/variants/sku/F-unknown', 1],
      ['/api/variants?q=f&limit=5', 1],
      ['/api/variants/product/fused', 1],
      ['/api/users/profile', 1],
      [`/api/users/${customer.id}`, 1],
      ['/api/users?limit=5', 1],
      [`/api/events?subject_id=${variantId}`, 1],
      [`/api/variants/${variantId}/stock/movements`, 2],
      ['/api/webhooks', 1],
      [`/api/webhooks/${webhookId}`, 1],
      [`/api/webhooks/${webhookId}/deliveries`, 2],
      ['/api/auth/sessions', 1],
      [`/api/users/${customer.id}/sessions`, 2],
      [`/api/users/${customer.id}/balance/ledger`, 2],
    ] as const) {
      counter.reset();
      const response = await get(url, admin);
      assert.ok(response.statusCode === 200 || response.statusCode === 404, `${url}: ${response.statusCode} ${response.body}`);
      assert.equal(counter.count, statements, url);
      assert.equal(counter.kinds[0], 'fused', `${url}: the first statement carries the caller's check`);
      assert.equal(counter.ownChecks, 0, url);
      // Nothing of the caller is kept between requests: the same read sends the same statements.
      const kinds = counter.kinds;
      counter.reset();
      const again = await get(url, admin);
      assert.equal(again.statusCode, response.statusCode, url);
      assert.equal(again.body, response.body, url);
      assert.deepEqual(counter.kinds.slice(0, statements), kinds.slice(0, statements), `${url}: the second read as the first`);
    }
    const page = await get('/api/variants/product/fused?include_total=true', admin);
    assert.equal(page.json().total, 1);
    assert.equal(page.json().items[0].id, variantId, 'rows come back as the query returned them');
  });

  it("answers an API client's read with one statement too, its secret or its token beside the data", async () => {
    const created = (await app.inject({ method: 'POST', url: '/api/clients', headers: admin.auth, payload: { name: 'Counted', scopes: ['variants:read'] } })).json();
    const token = (
      await app.inject({
        method: 'POST',
        url: '/api/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `grant_type=client_credentials&client_id=${created.id}&client_secret=${created.secret}`,
      })
    ).json().access_token;
    for (const credential of [created.secret, token]) {
      for (const url of [`/api/variants/${variantId}`, '/api/variants?limit=5']) {
        counter.reset();
        const response = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${credential}` } });
        assert.equal(response.statusCode, 200, response.body);
        // One statement reads the caller and the data; the first use also notes the client as used, a write of its own
        // that the reply does not wait for.
        assert.equal(counter.kinds[0], 'fused', `${url}: ${counter.kinds.join(', ')}`);
        assert.equal(counter.ownChecks, 0, url);
        assert.equal(counter.kinds.filter((kind) => kind === 'fused').length, 1, url);
        counter.reset();
        assert.equal((await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${credential}` } })).statusCode, 200);
        assert.deepEqual(counter.kinds, ['fused'], `${url}: the next read as the first, its use noted already`);
      }
    }
  });

  it('keeps the order of the rows the query returned', async () => {
    for (let index = 0; index < 3; index++) {
      await app.inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: { product_id: 'ordered', sku: `O-${index}-${randomUUID()}`, name: `O${index}`, price: 1, attributes: { n: String(index) } } });
    }
    const names = (await get('/api/variants/product/ordered', admin)).json().items.map((item: { name: string }) => item.name);
    assert.deepEqual(names, ['O0', 'O1', 'O2']);
    const newest = (await get('/api/variants?q=O&limit=3', admin)).json().items.map((item: { name: string }) => item.name);
    assert.deepEqual(newest, ['O2', 'O1', 'O0']);
  });

  it('refuses as before: 403 for a role before 404 and before 400, never the data', async () => {
    const forbidden = await get('/api/users?limit=5', customer);
    assert.equal(problemOf(forbidden).code, 'forbidden');
    assert.equal(counter.count > 0, true);
    assert.equal(problemOf(await get(`/api/users/${randomUUID()}`, customer)).code, 'forbidden', "a customer learns nothing of other users' ids");
    assert.equal(problemOf(await get('/api/users?limit=0', customer)).code, 'forbidden', 'the role speaks before the schema');
    assert.equal(problemOf(await get(`/api/events?subject_id=${variantId}`, customer)).code, 'forbidden');
    assert.equal((await get(`/api/users/${customer.id}`, customer)).json().id, customer.id, 'a customer reads itself');
    assert.equal(problemOf(await get('/api/users?limit=0', admin)).code, 'validation_failed');
  });

  it('applies a suspension and an ended session on the very next read', async () => {
    const target = await createUser(app);
    assert.equal((await get(`/api/variants/${variantId}`, target)).statusCode, 200);
    await sql`update users set status = 'suspended' where id = ${target.id}`.execute(db);
    const suspended = await get(`/api/variants/${variantId}`, target);
    assert.equal(suspended.statusCode, 403);
    assert.equal(problemOf(suspended).code, 'account_suspended');
    assert.equal(problemOf(await get(`/api/variants/${randomUUID()}`, target)).code, 'account_suspended', '403 before 404');
    await sql`update users set status = 'active' where id = ${target.id}`.execute(db);
    await sql`update sessions set ended_at = now() where user_id = ${target.id}`.execute(db);
    const ended = await get('/api/users/profile', target);
    assert.equal(ended.statusCode, 401);
    assert.equal(problemOf(ended).code, 'invalid_token');
    assert.match(String(ended.headers['www-authenticate']), /invalid_token/);
    await sql`update users set deleted_at = now() where id = ${target.id}`.execute(db);
    assert.equal(problemOf(await get(`/api/variants/${variantId}`, target)).code, 'invalid_token');
  });

  it("checks a write's caller in its transaction's first statement, then makes the change, every time", async () => {
    const target = await createUser(app);
    counter.reset();
    // The same change made directly: no request, so no caller to check.
    await inTransaction(db, (trx) =>
      applyBalanceChange(trx, { userId: target.id, currency: 'USD', ifMatch: undefined, change: { delta: 5, reason: 'direct' }, context: { actorId: admin.id, requestId: 'direct' } }),
    );
    const direct = counter.count;
    counter.reset();
    const response = await app.inject({ method: 'PUT', url: `/api/users/${target.id}/balance`, headers: admin.auth, payload: { delta: 5, reason: 'over HTTP' } });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.json().balance, 10);
    assert.equal(counter.count, direct + 1, 'the change, and the check before it');
    assert.equal(counter.kinds[0], 'check', "the transaction's first statement is the caller's check");
    const entry = await db.selectFrom('balance_ledger').select(['actor_id', 'delta']).where('user_id', '=', target.id).where('reason', '=', 'over HTTP').executeTakeFirstOrThrow();
    assert.deepEqual(entry, { actor_id: admin.id, delta: 5 });
    // The next write is checked the same way: nothing of the caller was kept.
    counter.reset();
    const again = await app.inject({ method: 'PUT', url: `/api/users/${target.id}/balance`, headers: admin.auth, payload: { delta: 5, reason: 'again' } });
    assert.equal(again.json().balance, 15, again.body);
    assert.deepEqual(counter.kinds, ['check', ...Array.from({ length: direct }, () => 'data')], 'the check, then the change');
    const second = await db.selectFrom('balance_ledger').select(['actor_id', 'delta']).where('user_id', '=', target.id).where('reason', '=', 'again').executeTakeFirstOrThrow();
    assert.deepEqual(second, { actor_id: admin.id, delta: 5 });
  });

  it('checks the caller of a webhook delete and of ending sessions in their first statement: 403 before 404, nothing changed, then the change', async () => {
    const webhookId = randomUUID();
    await insertWebhook(webhookId, 'https://hooks.example.com/gone');
    const target = await createUser(app);
    for (const id of [webhookId, randomUUID()]) {
      assert.equal(problemOf(await app.inject({ method: 'DELETE', url: `/api/webhooks/${id}`, headers: customer.auth })).code, 'forbidden');
    }
    for (const id of [target.id, randomUUID()]) {
      assert.equal(problemOf(await app.inject({ method: 'DELETE', url: `/api/users/${id}/sessions`, headers: customer.auth })).code, 'forbidden');
      assert.equal(problemOf(await app.inject({ method: 'DELETE', url: `/api/users/${id}/sessions/${randomUUID()}`, headers: customer.auth })).code, 'forbidden');
    }
    assert.ok(await db.selectFrom('webhooks').select('id').where('id', '=', webhookId).executeTakeFirst(), 'the webhook stays');
    const open = await db.selectFrom('sessions').select('id').where('user_id', '=', target.id).where('ended_at', 'is', null).execute();
    assert.equal(open.length, 1, "the user's session stays open");
    assert.equal((await app.inject({ method: 'DELETE', url: `/api/webhooks/${webhookId}`, headers: admin.auth })).statusCode, 204);
    assert.equal(await db.selectFrom('webhooks').select('id').where('id', '=', webhookId).executeTakeFirst(), undefined);
    assert.equal((await app.inject({ method: 'DELETE', url: `/api/users/${target.id}/sessions/${open[0]!.id}`, headers: admin.auth })).statusCode, 204);
    assert.equal((await app.inject({ method: 'DELETE', url: `/api/users/${randomUUID()}/sessions`, headers: admin.auth })).statusCode, 404);
  });

  it('refuses a write as before, and nothing of it stays: 403 for a role before 404, a suspended caller 403, an ended session 401', async () => {
    const target = await createUser(app);
    const otherAdmin = await createUser(app, { role: 'admin', admin });
    const change = (session: Session, userId: string) => app.inject({ method: 'PUT', url: `/api/users/${userId}/balance`, headers: session.auth, payload: { delta: 7, reason: 'refused' } });
    assert.equal(problemOf(await change(customer, randomUUID())).code, 'forbidden', '403 before 404');
    assert.equal(problemOf(await change(customer, target.id)).code, 'forbidden');
    await sql`update users set status = 'suspended' where id = ${otherAdmin.id}`.execute(db);
    assert.equal(problemOf(await change(otherAdmin, target.id)).code, 'account_suspended');
    assert.equal(problemOf(await change(otherAdmin, randomUUID())).code, 'account_suspended', '403 before 404');
    const keyed = await app.inject({ method: 'PUT', url: `/api/users/${target.id}/balance`, headers: { ...otherAdmin.auth, 'idempotency-key': randomUUID() }, payload: { delta: 7, reason: 'refused' } });
    assert.equal(problemOf(keyed).code, 'account_suspended');
    await sql`update users set status = 'active' where id = ${otherAdmin.id}`.execute(db);
    await sql`update sessions set ended_at = now() where user_id = ${otherAdmin.id}`.execute(db);
    assert.equal(problemOf(await change(otherAdmin, target.id)).code, 'invalid_token');
    const user = await db.selectFrom('users').select('balance').where('id', '=', target.id).executeTakeFirstOrThrow();
    assert.equal(user.balance, 0);
    assert.equal((await db.selectFrom('balance_ledger').select('id').where('user_id', '=', target.id).execute()).length, 0);
    assert.equal((await db.selectFrom('events').select('id').where('subject_id', '=', target.id).where('type', '=', 'user.balance_changed').execute()).length, 0);
    assert.equal((await db.selectFrom('idempotency_keys').select('key').where('owner_id', '=', otherAdmin.id).execute()).length, 0, 'a refused caller claims no key');
  });

  it('checks the caller of every other write once, before anything of the change', async () => {
    const target = await createUser(app);
    const webhookId = randomUUID();
    await insertWebhook(webhookId, 'http://127.0.0.1:9/before');
    const variant = (sku: string) => ({ product_id: sku, sku, name: sku, price: 1 });
    for (const [method, url, session, payload, status] of [
      ['POST', '/api/variants', admin, variant(`W-${randomUUID()}`), 201],
      ['POST', `/api/variants/${randomUUID()}`, admin, variant(`W-${randomUUID()}`), 201],
      ['POST', '/api/variants/batch', admin, { operations: [{ op: 'create', variant: variant(`W-${randomUUID()}`) }] }, 200],
      ['POST', '/api/auth/verify-email/resend', target, undefined, 202],
      ['PUT', '/api/users/change-password', target, { current_password: target.password, new_password: 'another-password-456' }, 200],
      ['POST', '/api/signing-keys/rotate', admin, undefined, 200],
      ['PUT', `/api/webhooks/${webhookId}`, admin, { url: 'http://127.0.0.1:9/after', events: ['*'], enabled: true }, 200],
      ['POST', '/api/webhooks', admin, { url: 'http://127.0.0.1:9/new', events: ['*'] }, 201],
    ] as const) {
      counter.reset();
      const response = await app.inject({ method, url, headers: session.auth, ...(payload ? { payload } : {}) });
      assert.equal(response.statusCode, status, `${method} ${url}: ${response.body}`);
      assert.ok(['check', 'fused'].includes(counter.kinds[0]!), `${method} ${url}: the first statement checks the caller`);
      assert.ok(counter.ownChecks <= 1, `${method} ${url}: checked once`);
    }
  });

  it('refuses those writes as before, and nothing of them stays: 403 for a role before 404 and 409, a suspended caller 403', async () => {
    const taken = await db.selectFrom('variants').select(['id', 'sku']).where('id', '=', variantId).executeTakeFirstOrThrow();
    const webhookId = randomUUID();
    await insertWebhook(webhookId, 'http://127.0.0.1:9/kept');
    const keysBefore = await db.selectFrom('signing_keys').select('kid').execute();
    const target = await createUser(app);
    const eventsBefore = await db.selectFrom('events').select('id').execute();
    const mailsBefore = await db.selectFrom('email_outbox').select('id').where('to_address', '=', target.email).execute();
    const refused = async (method: 'POST' | 'PUT' | 'DELETE', url: string, session: Session, payload?: object) =>
      problemOf(await app.inject({ method, url, headers: session.auth, ...(payload ? { payload } : {}) })).code;
    const sku = `R-${randomUUID()}`;
    const body = { product_id: 'refused', sku, name: 'R', price: 1 };
    assert.equal(await refused('POST', '/api/variants', customer, { ...body, sku: taken.sku }), 'forbidden', '403 before 409');
    assert.equal(await refused('POST', '/api/variants', customer, body), 'forbidden');
    assert.equal(await refused('POST', `/api/variants/${taken.id}`, customer, body), 'forbidden', '403 before 409');
    assert.equal(await refused('POST', '/api/variants/batch', customer, { operations: [{ op: 'delete', id: randomUUID() }] }), 'forbidden', '403 before 404');
    assert.equal(await refused('POST', '/api/variants/batch', customer, { operations: [{ op: 'create', variant: body }] }), 'forbidden');
    assert.equal(await refused('POST', '/api/signing-keys/rotate', customer), 'forbidden');
    assert.equal(await refused('PUT', `/api/webhooks/${randomUUID()}`, customer, { url: 'http://127.0.0.1:9/x', events: ['*'], enabled: true }), 'forbidden', '403 before 404');
    assert.equal(await refused('PUT', `/api/webhooks/${webhookId}`, customer, { url: 'http://127.0.0.1:9/x', events: ['*'], enabled: true }), 'forbidden');
    const [session] = await db.selectFrom('sessions').select('id').where('user_id', '=', target.id).execute();
    const hash = (await db.selectFrom('users').select('password_hash').where('id', '=', target.id).executeTakeFirstOrThrow()).password_hash;
    await sql`update users set status = 'suspended' where id = ${target.id}`.execute(db);
    assert.equal(await refused('PUT', '/api/users/change-password', target, { current_password: target.password, new_password: 'another-password-789' }), 'account_suspended');
    assert.equal(await refused('DELETE', `/api/auth/sessions/${session!.id}`, target), 'account_suspended');
    assert.equal(await refused('DELETE', `/api/auth/sessions/${randomUUID()}`, target), 'account_suspended', '403 before 404');
    assert.equal(await refused('POST', '/api/auth/verify-email/resend', target), 'account_suspended');
    await sql`update users set status = 'active' where id = ${target.id}`.execute(db);
    await sql`update sessions set ended_at = now() where id = ${session!.id}`.execute(db);
    assert.equal(await refused('PUT', '/api/users/change-password', target, { current_password: target.password, new_password: 'another-password-789' }), 'invalid_token');
    assert.equal((await db.selectFrom('users').select('password_hash').where('id', '=', target.id).executeTakeFirstOrThrow()).password_hash, hash);
    assert.equal(await db.selectFrom('variants').select('id').where('sku', '=', sku).executeTakeFirst(), undefined);
    assert.deepEqual(await db.selectFrom('signing_keys').select('kid').execute(), keysBefore);
    assert.equal((await db.selectFrom('webhooks').select('url').where('id', '=', webhookId).executeTakeFirstOrThrow()).url, 'http://127.0.0.1:9/kept');
    assert.equal((await db.selectFrom('events').select('id').execute()).length, eventsBefore.length, 'no event of a refused write');
    assert.equal((await db.selectFrom('email_outbox').select('id').where('to_address', '=', target.email).execute()).length, mailsBefore.length, 'no email for a refused caller');
  });
});

describe('a handler that never asks the admission', () => {
  it('still answers a refused caller with the refusal, not with what the handler sent', async () => {
    const database = await openTestDatabase(undefined);
    const { app } = await buildApp({ config: testConfig(), database, logger: false, tellOperator: () => {} });
    // A route written carelessly: it answers without reading through its admission.
    app.get('/api/careless', { config: { access: { roles: ['admin'] } } }, async () => ({ secret: 'for admins only' }));
    await app.ready();
    try {
      const customer = await createUser(app);
      const refused = await app.inject({ method: 'GET', url: '/api/careless', headers: customer.auth });
      assert.equal(refused.statusCode, 403);
      assert.equal(problemOf(refused).code, 'forbidden');
      assert.doesNotMatch(refused.body, /for admins only/);
      const admin = await loginAdmin(app);
      assert.deepEqual((await app.inject({ method: 'GET', url: '/api/careless', headers: admin.auth })).json(), { secret: 'for admins only' });
    } finally {
      await app.close();
    }
  });

  it('gives a handler the database only out of an admission, and decorates nothing that holds it', async () => {
    // Checked by the type-check of `npm test`: each line marked must fail to compile.
    const beforeAdmission = (access: Access) => {
      // @ts-expect-error the database comes out of read, readPage, transaction, admit() or anyone()
      void access.db;
      // @ts-expect-error the caller comes out of transaction or admit()
      void access.caller;
    };
    assert.equal(typeof beforeAdmission, 'function');
    // What a handler sees through request.server: no runner, queue, key ring, issuer or metrics registry.
    const database = await openTestDatabase(undefined);
    const { app } = await buildApp({ config: testConfig(), database, logger: false, tellOperator: () => {} });
    try {
      for (const name of ['jobs', 'webhookDeliveries', 'signingKeys', 'tokenIssuer', 'db', 'database']) assert.equal(app.hasDecorator(name), false, name);
      assert.equal('registry' in app.metrics, false);
    } finally {
      await app.close();
    }
  });

  it('refuses to start an app with an API route that declares no rule', async () => {
    const database = await openTestDatabase(undefined);
    const { app } = await buildApp({ config: testConfig(), database, logger: false, tellOperator: () => {} });
    try {
      assert.throws(() => app.get('/api/forgotten', async () => ({})), /declares no access rule/);
    } finally {
      await app.close();
    }
  });
});
