import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { sql, type KyselyPlugin } from 'kysely';
import { buildApp } from '../../src/app.js';
import { inTransaction } from '../../src/db/transaction.js';
import { applyBalanceChange } from '../../src/users/balance-service.js';
import { createScratchDatabase } from '../helpers/scratch-database.js';
import { createUser, loginAdmin, onPostgres, openTestDatabase, problemOf, testConfig, type Session } from '../helpers/test-app.js';

/** Counts the statements the app sends (a result comes back once per statement executed). */
class StatementCounter implements KyselyPlugin {
  count = 0;
  /** The caller checks made in a statement of their own (a data query carries none in its tree). */
  ownChecks = 0;
  transformQuery: KyselyPlugin['transformQuery'] = ({ node }) => {
    if (JSON.stringify(node, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value)).includes('caller__role')) this.ownChecks++;
    return node;
  };
  transformResult: KyselyPlugin['transformResult'] = async ({ result }) => {
    this.count++;
    return result;
  };
}

describe('the caller check travels with the data: one statement per authenticated read', () => {
  const counter = new StatementCounter();
  let app: FastifyInstance;
  let admin: Session;
  let customer: Session;
  let variantId: string;
  let drop: (() => Promise<void>) | undefined;
  before(async () => {
    const scratch = onPostgres ? await createScratchDatabase(process.env.DATABASE_URL!) : undefined;
    drop = scratch?.drop;
    const database = await openTestDatabase(scratch?.url);
    // A webhook's URL may name this machine, so that replacing one resolves no name over the network.
    const config = testConfig({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }, scratch?.url);
    app = await buildApp({ config, database: { ...database, db: database.db.withPlugin(counter) }, logger: false, printSecret: () => {} });
    await app.ready();
    // Background loops would add their own statements to the count.
    await app.jobs.stop();
    admin = await loginAdmin(app);
    customer = await createUser(app);
    variantId = (await app.inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: { product_id: 'fused', sku: `F-${randomUUID()}`, name: 'F', price: 1, stock: 2 } })).json().id;
  });
  after(async () => {
    await app.close();
    await drop?.();
  });
  beforeEach(() => {
    counter.count = 0;
    counter.ownChecks = 0;
  });
  const get = (url: string, session: Session) => app.inject({ method: 'GET', url, headers: session.auth });
  // Straight into the table: a webhook made over HTTP would need its URL resolved.
  const insertWebhook = (id: string, url: string) =>
    app.db.insertInto('webhooks').values({ id, url, events: ['*'], description: null, enabled: true, secret: 'whsec_test', created_at: new Date(), updated_at: new Date() }).execute();

  it('answers each read with one statement: the caller, the session and the rows together', async () => {
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
      counter.count = 0;
      const response = await get(url, admin);
      assert.ok(response.statusCode === 200 || response.statusCode === 404, `${url}: ${response.statusCode} ${response.body}`);
      assert.equal(counter.count, statements, url);
    }
    const page = await get('/api/variants/product/fused?include_total=true', admin);
    assert.equal(page.json().total, 1);
    assert.equal(page.json().items[0].id, variantId, 'rows come back as the query returned them');
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
    await sql`update users set status = 'suspended' where id = ${target.id}`.execute(app.db);
    const suspended = await get(`/api/variants/${variantId}`, target);
    assert.equal(suspended.statusCode, 403);
    assert.equal(problemOf(suspended).code, 'account_suspended');
    assert.equal(problemOf(await get(`/api/variants/${randomUUID()}`, target)).code, 'account_suspended', '403 before 404');
    await sql`update users set status = 'active' where id = ${target.id}`.execute(app.db);
    await sql`update sessions set ended_at = now() where user_id = ${target.id}`.execute(app.db);
    const ended = await get('/api/users/profile', target);
    assert.equal(ended.statusCode, 401);
    assert.equal(problemOf(ended).code, 'invalid_token');
    assert.match(String(ended.headers['www-authenticate']), /invalid_token/);
    await sql`update users set deleted_at = now() where id = ${target.id}`.execute(app.db);
    assert.equal(problemOf(await get(`/api/variants/${variantId}`, target)).code, 'invalid_token');
  });

  it("checks a write's caller in its transaction's first statement: a balance change makes no statement more than the change itself", async () => {
    const target = await createUser(app);
    counter.count = 0;
    // The same change made directly: no request, so no caller to check.
    await inTransaction(app.db, (trx) =>
      applyBalanceChange(trx, { userId: target.id, currency: 'USD', ifMatch: undefined, change: { delta: 5, reason: 'direct' }, context: { actorId: admin.id, requestId: 'direct' } }),
    );
    const direct = counter.count;
    counter.count = 0;
    const response = await app.inject({ method: 'PUT', url: `/api/users/${target.id}/balance`, headers: admin.auth, payload: { delta: 5, reason: 'over HTTP' } });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.json().balance, 10);
    assert.equal(counter.count, direct);
    const entry = await app.db.selectFrom('balance_ledger').select(['actor_id', 'delta']).where('user_id', '=', target.id).where('reason', '=', 'over HTTP').executeTakeFirstOrThrow();
    assert.deepEqual(entry, { actor_id: admin.id, delta: 5 });
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
    assert.ok(await app.db.selectFrom('webhooks').select('id').where('id', '=', webhookId).executeTakeFirst(), 'the webhook stays');
    const open = await app.db.selectFrom('sessions').select('id').where('user_id', '=', target.id).where('ended_at', 'is', null).execute();
    assert.equal(open.length, 1, "the user's session stays open");
    assert.equal((await app.inject({ method: 'DELETE', url: `/api/webhooks/${webhookId}`, headers: admin.auth })).statusCode, 204);
    assert.equal(await app.db.selectFrom('webhooks').select('id').where('id', '=', webhookId).executeTakeFirst(), undefined);
    assert.equal((await app.inject({ method: 'DELETE', url: `/api/users/${target.id}/sessions/${open[0]!.id}`, headers: admin.auth })).statusCode, 204);
    assert.equal((await app.inject({ method: 'DELETE', url: `/api/users/${randomUUID()}/sessions`, headers: admin.auth })).statusCode, 404);
  });

  it('refuses a write as before, and nothing of it stays: 403 for a role before 404, a suspended caller 403, an ended session 401', async () => {
    const target = await createUser(app);
    const otherAdmin = await createUser(app, { role: 'admin', admin });
    const change = (session: Session, userId: string) => app.inject({ method: 'PUT', url: `/api/users/${userId}/balance`, headers: session.auth, payload: { delta: 7, reason: 'refused' } });
    assert.equal(problemOf(await change(customer, randomUUID())).code, 'forbidden', '403 before 404');
    assert.equal(problemOf(await change(customer, target.id)).code, 'forbidden');
    await sql`update users set status = 'suspended' where id = ${otherAdmin.id}`.execute(app.db);
    assert.equal(problemOf(await change(otherAdmin, target.id)).code, 'account_suspended');
    assert.equal(problemOf(await change(otherAdmin, randomUUID())).code, 'account_suspended', '403 before 404');
    const keyed = await app.inject({ method: 'PUT', url: `/api/users/${target.id}/balance`, headers: { ...otherAdmin.auth, 'idempotency-key': randomUUID() }, payload: { delta: 7, reason: 'refused' } });
    assert.equal(problemOf(keyed).code, 'account_suspended');
    await sql`update users set status = 'active' where id = ${otherAdmin.id}`.execute(app.db);
    await sql`update sessions set ended_at = now() where user_id = ${otherAdmin.id}`.execute(app.db);
    assert.equal(problemOf(await change(otherAdmin, target.id)).code, 'invalid_token');
    const user = await app.db.selectFrom('users').select('balance').where('id', '=', target.id).executeTakeFirstOrThrow();
    assert.equal(user.balance, 0);
    assert.equal((await app.db.selectFrom('balance_ledger').select('id').where('user_id', '=', target.id).execute()).length, 0);
    assert.equal((await app.db.selectFrom('events').select('id').where('subject_id', '=', target.id).where('type', '=', 'user.balance_changed').execute()).length, 0);
    assert.equal((await app.db.selectFrom('idempotency_keys').select('key').where('owner_id', '=', otherAdmin.id).execute()).length, 0, 'a refused caller claims no key');
  });

  it('checks the caller of the other writes in their first statement too, never in a statement of its own', async () => {
    const target = await createUser(app);
    const webhookId = randomUUID();
    await insertWebhook(webhookId, 'http://127.0.0.1:9/before');
    const variant = (sku: string) => ({ product_id: sku, sku, name: sku, price: 1 });
    const firstSession = await app.db.selectFrom('sessions').select('id').where('user_id', '=', target.id).executeTakeFirstOrThrow();
    for (const [method, url, session, payload, status] of [
      ['POST', '/api/variants', admin, variant(`W-${randomUUID()}`), 201],
      ['POST', `/api/variants/${randomUUID()}`, admin, variant(`W-${randomUUID()}`), 201],
      ['POST', '/api/variants/batch', admin, { operations: [{ op: 'create', variant: variant(`W-${randomUUID()}`) }] }, 200],
      ['POST', '/api/auth/verify-email/resend', target, undefined, 202],
      ['PUT', '/api/users/change-password', target, { current_password: target.password, new_password: 'another-password-456' }, 200],
      ['POST', '/api/signing-keys/rotate', admin, undefined, 200],
      ['PUT', `/api/webhooks/${webhookId}`, admin, { url: 'http://127.0.0.1:9/after', events: ['*'], enabled: true }, 200],
    ] as const) {
      counter.ownChecks = 0;
      const response = await app.inject({ method, url, headers: session.auth, ...(payload ? { payload } : {}) });
      assert.equal(response.statusCode, status, `${method} ${url}: ${response.body}`);
      assert.equal(counter.ownChecks, 0, `${method} ${url}`);
    }
    // The password change ended the target's other sessions and opened a new one; end that one.
    const [opened] = await app.db.selectFrom('sessions').select('id').where('user_id', '=', target.id).where('ended_at', 'is', null).execute();
    assert.notEqual(opened!.id, firstSession.id);
    const signedIn = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: target.email, password: 'another-password-456' } });
    const auth = { authorization: `Bearer ${signedIn.json().access_token}` };
    counter.ownChecks = 0;
    const ended = await app.inject({ method: 'DELETE', url: `/api/auth/sessions/${opened!.id}`, headers: auth });
    assert.equal(ended.statusCode, 204, ended.body);
    assert.equal(counter.ownChecks, 0);
    assert.notEqual((await app.db.selectFrom('sessions').select('ended_at').where('id', '=', opened!.id).executeTakeFirstOrThrow()).ended_at, null);
    assert.equal(problemOf(await app.inject({ method: 'DELETE', url: `/api/auth/sessions/${opened!.id}`, headers: auth })).code, 'not_found', 'an ended session');
    const [stillOpen] = await app.db.selectFrom('sessions').select('id').where('user_id', '=', target.id).where('ended_at', 'is', null).execute();
    assert.equal(problemOf(await app.inject({ method: 'DELETE', url: `/api/auth/sessions/${stillOpen!.id}`, headers: admin.auth })).code, 'not_found', "another user's session");
    assert.equal((await app.db.selectFrom('sessions').select('ended_at').where('id', '=', stillOpen!.id).executeTakeFirstOrThrow()).ended_at, null);
    // The one write with a check of its own: no read comes before its URL is resolved.
    counter.ownChecks = 0;
    assert.equal((await app.inject({ method: 'POST', url: '/api/webhooks', headers: admin.auth, payload: { url: 'http://127.0.0.1:9/new', events: ['*'] } })).statusCode, 201);
    assert.equal(counter.ownChecks, 1);
  });

  it('refuses those writes as before, and nothing of them stays: 403 for a role before 404 and 409, a suspended caller 403', async () => {
    const taken = await app.db.selectFrom('variants').select(['id', 'sku']).where('id', '=', variantId).executeTakeFirstOrThrow();
    const webhookId = randomUUID();
    await insertWebhook(webhookId, 'http://127.0.0.1:9/kept');
    const keysBefore = await app.db.selectFrom('signing_keys').select('kid').execute();
    const target = await createUser(app);
    const eventsBefore = await app.db.selectFrom('events').select('id').execute();
    const mailsBefore = await app.db.selectFrom('email_outbox').select('id').where('to_address', '=', target.email).execute();
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
    const [session] = await app.db.selectFrom('sessions').select('id').where('user_id', '=', target.id).execute();
    const hash = (await app.db.selectFrom('users').select('password_hash').where('id', '=', target.id).executeTakeFirstOrThrow()).password_hash;
    await sql`update users set status = 'suspended' where id = ${target.id}`.execute(app.db);
    assert.equal(await refused('PUT', '/api/users/change-password', target, { current_password: target.password, new_password: 'another-password-789' }), 'account_suspended');
    assert.equal(await refused('DELETE', `/api/auth/sessions/${session!.id}`, target), 'account_suspended');
    assert.equal(await refused('DELETE', `/api/auth/sessions/${randomUUID()}`, target), 'account_suspended', '403 before 404');
    assert.equal(await refused('POST', '/api/auth/verify-email/resend', target), 'account_suspended');
    await sql`update users set status = 'active' where id = ${target.id}`.execute(app.db);
    await sql`update sessions set ended_at = now() where id = ${session!.id}`.execute(app.db);
    assert.equal(await refused('PUT', '/api/users/change-password', target, { current_password: target.password, new_password: 'another-password-789' }), 'invalid_token');
    assert.equal((await app.db.selectFrom('users').select('password_hash').where('id', '=', target.id).executeTakeFirstOrThrow()).password_hash, hash);
    assert.equal(await app.db.selectFrom('variants').select('id').where('sku', '=', sku).executeTakeFirst(), undefined);
    assert.deepEqual(await app.db.selectFrom('signing_keys').select('kid').execute(), keysBefore);
    assert.equal((await app.db.selectFrom('webhooks').select('url').where('id', '=', webhookId).executeTakeFirstOrThrow()).url, 'http://127.0.0.1:9/kept');
    assert.equal((await app.db.selectFrom('events').select('id').execute()).length, eventsBefore.length, 'no event of a refused write');
    assert.equal((await app.db.selectFrom('email_outbox').select('id').where('to_address', '=', target.email).execute()).length, mailsBefore.length, 'no email for a refused caller');
  });
});
