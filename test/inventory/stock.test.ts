import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { buildTestApp, createUser, loginAdmin, newVariantBody, onPostgres, problemOf, useAppWithAdmin } from '../helpers/test-app.js';

const newVariant = (stock: number) => newVariantBody(stock, 'inv');

describe('stock that moves only by recorded movements', () => {
  const fixture = useAppWithAdmin();
  const inject = (request: InjectOptions) => fixture.app.inject(request);
  const create = async (stock: number) => (await inject({ method: 'POST', url: '/api/variants', headers: fixture.admin.auth, payload: newVariant(stock) })).json();
  const movements = async (id: string) => (await inject({ method: 'GET', url: `/api/variants/${id}/stock/movements?include_total=true`, headers: fixture.admin.auth })).json();
  const sumOfMovements = async (id: string) =>
    Number((await fixture.db.selectFrom('stock_movements').select((eb) => eb.fn.sum<number>('delta').as('sum')).where('variant_id', '=', id).executeTakeFirstOrThrow()).sum ?? 0);

  it('shows reserved and available, and writes the first movement when a variant is created with stock', async () => {
    const variant = await create(10);
    assert.deepEqual({ stock: variant.stock, reserved: variant.reserved, available: variant.available }, { stock: 10, reserved: 0, available: 10 });
    const page = await movements(variant.id);
    assert.equal(page.total, 1);
    assert.deepEqual({ delta: page.items[0].delta, stock_after: page.items[0].stock_after, reason: page.items[0].reason }, { delta: 10, stock_after: 10, reason: 'variant created' });
    const readOnly = await inject({ method: 'PUT', url: `/api/variants/${variant.id}`, headers: fixture.admin.auth, payload: { ...newVariant(1), reserved: 0 } });
    assert.equal(readOnly.statusCode, 400, 'reserved and available are read-only');
  });

  it('writes a closing movement when a variant is deleted, so an id re-created keeps stock = the sum of its movements', async () => {
    const variant = await create(7);
    assert.equal((await inject({ method: 'DELETE', url: `/api/variants/${variant.id}`, headers: fixture.admin.auth })).statusCode, 204);
    const closing = await fixture.db.selectFrom('stock_movements').selectAll().where('variant_id', '=', variant.id).orderBy('created_at', 'desc').executeTakeFirstOrThrow();
    assert.deepEqual({ delta: closing.delta, stock_after: closing.stock_after, reason: closing.reason }, { delta: -7, stock_after: 0, reason: 'variant deleted' });
    const again = await inject({ method: 'POST', url: `/api/variants/${variant.id}`, headers: fixture.admin.auth, payload: newVariant(3) });
    assert.equal(again.statusCode, 201);
    assert.equal(await sumOfMovements(variant.id), 3);
  });

  it('moves stock by a delta or to a level, one movement and one event each, with If-Match and Idempotency-Key', async () => {
    const variant = await create(10);
    const url = `/api/variants/${variant.id}/stock`;
    const taken = await inject({ method: 'PUT', url, headers: { ...fixture.admin.auth, 'if-match': '"1"' }, payload: { delta: -3, reason: ' Damaged ', reference: 'INC-1' } });
    assert.equal(taken.statusCode, 200, taken.body);
    assert.equal(taken.json().stock, 7);
    assert.equal(taken.headers.etag, '"2"');
    const same = await inject({ method: 'PUT', url, headers: fixture.admin.auth, payload: { stock: 7, reason: 'Count' } });
    assert.equal(same.json().version, 3, 'a set to the same value is still a movement');
    const stale = await inject({ method: 'PUT', url, headers: { ...fixture.admin.auth, 'if-match': '"1"' }, payload: { delta: 1, reason: 'x' } });
    assert.equal(problemOf(stale).code, 'precondition_failed');
    const short = await inject({ method: 'PUT', url, headers: fixture.admin.auth, payload: { delta: -8, reason: 'Too many' } });
    assert.equal(short.statusCode, 409);
    assert.equal(problemOf(short).code, 'insufficient_stock');
    const tooMuch = await inject({ method: 'PUT', url, headers: fixture.admin.auth, payload: { stock: 1e9 + 1, reason: 'x' } });
    assert.equal(tooMuch.statusCode, 400);
    const key = randomUUID();
    const first = await inject({ method: 'PUT', url, headers: { ...fixture.admin.auth, 'idempotency-key': key }, payload: { delta: 5, reason: 'Delivery' } });
    const replay = await inject({ method: 'PUT', url, headers: { ...fixture.admin.auth, 'idempotency-key': key }, payload: { delta: 5, reason: 'Delivery' } });
    assert.equal(replay.statusCode, 200);
    assert.deepEqual(replay.json(), first.json());
    assert.equal(replay.headers.etag, first.headers.etag);
    const patched = await inject({ method: 'PATCH', url: `/api/variants/${variant.id}`, headers: fixture.admin.auth, payload: { stock: 20 } });
    assert.equal(patched.json().stock, 20);
    const page = await movements(variant.id);
    assert.deepEqual(
      page.items.map((item: { delta: number; reason: string; reference: string | null }) => [item.delta, item.reason, item.reference]),
      [[8, 'variant updated', null], [5, 'Delivery', null], [0, 'Count', null], [-3, 'Damaged', 'INC-1'], [10, 'variant created', null]],
    );
    assert.equal(await sumOfMovements(variant.id), 20, 'the stock is the sum of its movements');
    const events = await fixture.db.selectFrom('events').selectAll().where('subject_id', '=', variant.id).orderBy('created_at').orderBy('id').execute();
    // A PATCH that changes only the stock records variant.stock_changed, and no variant.updated (API.md section 10).
    assert.deepEqual(events.map((event) => event.type), ['variant.created', 'variant.stock_changed', 'variant.stock_changed', 'variant.stock_changed', 'variant.stock_changed']);
    const atDefault = (await fixture.db.selectFrom('locations').select('id').where('is_default', '=', true).executeTakeFirstOrThrow()).id;
    // Section 21: the movement's location beside it (the default, where the stock of a shop with one location is).
    assert.deepEqual(events[1]!.data, { before: { stock: 10 }, after: { stock: 7 }, delta: -3, stock_after: 7, location_id: atDefault, reason: 'Damaged', reference: 'INC-1' });
    assert.deepEqual(events[4]!.data, { before: { stock: 12 }, after: { stock: 20 }, delta: 8, stock_after: 20, location_id: atDefault, reason: 'variant updated', reference: null });
    assert.equal((await inject({ method: 'GET', url: `/api/variants/${randomUUID()}/stock/movements`, headers: fixture.admin.auth })).statusCode, 404);
    const customer = await createUser(fixture.app);
    assert.equal((await inject({ method: 'PUT', url, headers: customer.auth, payload: { delta: 1, reason: 'x' } })).statusCode, 403);
  });

  it('answers every bound of a stock change and an adjustment with 400 validation_failed and the path', async () => {
    const variant = await create(5);
    const url = `/api/variants/${variant.id}/stock`;
    const line = { variant_id: variant.id, delta: 1 };
    const cases: [string, string, object, string][] = [
      ['PUT', url, { delta: 0, reason: 'x' }, '/delta'],
      ['PUT', url, { delta: 1.5, reason: 'x' }, '/delta'],
      ['PUT', url, { delta: 1, stock: 2, reason: 'x' }, ''],
      ['PUT', url, { reason: 'x' }, ''],
      ['PUT', url, { stock: -1, reason: 'x' }, '/stock'],
      ['PUT', url, { delta: 1, reason: '' }, '/reason'],
      ['PUT', url, { delta: 1, reason: 'x'.repeat(201) }, '/reason'],
      ['PUT', url, { delta: 1, reason: 'x', reference: 'x'.repeat(201) }, '/reference'],
      ['PUT', url, { delta: 1e9, reason: 'x' }, '/delta'],
      ['POST', '/api/stock-adjustments', { lines: [], reason: 'x' }, '/lines'],
      ['POST', '/api/stock-adjustments', { lines: Array.from({ length: 101 }, () => ({ variant_id: randomUUID(), delta: 1 })), reason: 'x' }, '/lines'],
      ['POST', '/api/stock-adjustments', { lines: [{ ...line, delta: 0 }], reason: 'x' }, '/lines/0/delta'],
      ['POST', '/api/stock-adjustments', { lines: [line] }, '/reason'],
      ['POST', '/api/stock-adjustments', { lines: [{ ...line, extra: 1 }], reason: 'x' }, '/lines/0/extra'],
      ['POST', '/api/stock-adjustments', { lines: [{ ...line, delta: 1e9 }], reason: 'x' }, '/lines/0/delta'],
    ];
    for (const [method, target, payload, path] of cases) {
      const response = await inject({ method: method as 'PUT' | 'POST', url: target, headers: fixture.admin.auth, payload });
      assert.equal(response.statusCode, 400, `${method} ${JSON.stringify(payload).slice(0, 60)}: ${response.body}`);
      assert.equal(problemOf(response).code, 'validation_failed');
      if (path) assert.ok(problemOf(response).errors?.some((error) => error.path === path), `${path} in ${response.body}`);
    }
    const unchanged = (await inject({ method: 'GET', url: `/api/variants/${variant.id}`, headers: fixture.admin.auth })).json();
    assert.deepEqual([unchanged.stock, unchanged.version], [5, variant.version], 'nothing moved');
  });

  it('adjusts several variants at once, all or nothing, reporting every line that falls short', async () => {
    const [a, b, c] = [await create(5), await create(1), await create(2)];
    const shortfall = await inject({
      method: 'POST',
      url: '/api/stock-adjustments',
      headers: fixture.admin.auth,
      payload: { lines: [{ variant_id: a.id, delta: -1 }, { variant_id: b.id, delta: -2 }, { variant_id: c.id, delta: -3 }], reason: 'Sold' },
    });
    assert.equal(shortfall.statusCode, 409);
    assert.deepEqual(problemOf(shortfall).errors?.map((error) => error.path), ['/lines/1', '/lines/2']);
    assert.equal((await inject({ method: 'GET', url: `/api/variants/${a.id}`, headers: fixture.admin.auth })).json().stock, 5, 'nothing changed');
    const missing = await inject({ method: 'POST', url: '/api/stock-adjustments', headers: fixture.admin.auth, payload: { lines: [{ variant_id: a.id, delta: 1 }, { variant_id: randomUUID(), delta: 1 }], reason: 'x' } });
    assert.equal(missing.statusCode, 404);
    assert.deepEqual(problemOf(missing).errors?.map((error) => error.path), ['/lines/1/variant_id']);
    const twice = await inject({ method: 'POST', url: '/api/stock-adjustments', headers: fixture.admin.auth, payload: { lines: [{ variant_id: a.id, delta: 1 }, { variant_id: a.id, delta: 1 }], reason: 'x' } });
    assert.equal(twice.statusCode, 400);
    const done = await inject({
      method: 'POST',
      url: '/api/stock-adjustments',
      headers: fixture.admin.auth,
      payload: { lines: [{ variant_id: c.id, delta: 10 }, { variant_id: a.id, delta: -5 }], reason: 'Delivery and sale', reference: 'PO-9' },
    });
    assert.equal(done.statusCode, 200, done.body);
    assert.deepEqual(done.json().items.map((item: { id: string; stock: number }) => [item.id, item.stock]), [[c.id, 12], [a.id, 0]]);
    assert.equal(await sumOfMovements(c.id), 12);
    assert.equal(await sumOfMovements(a.id), 0);
  });
});

describe('adjustments racing each other (PostgreSQL)', { skip: !onPostgres && 'needs PostgreSQL' }, () => {
  it('never deadlocks on lines in opposite orders across two instances, and loses no update', { timeout: 60_000 }, async () => {
    const first = await buildTestApp();
    const second = await buildTestApp({ databaseUrl: first.databaseUrl! });
    try {
      const admin = await loginAdmin(first.app);
      const ids: string[] = [];
      for (let index = 0; index < 4; index++) {
        ids.push((await first.app.inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: newVariant(1000) })).json().id);
      }
      const requests = Array.from({ length: 60 }, (_, index) => {
        const ordered = index % 2 ? [...ids].reverse() : ids;
        const app = index % 2 ? second.app : first.app;
        return app.inject({ method: 'POST', url: '/api/stock-adjustments', headers: admin.auth, payload: { lines: ordered.map((id) => ({ variant_id: id, delta: -1 })), reason: 'Race' } });
      });
      const statuses = (await Promise.all(requests)).map((response) => response.statusCode);
      assert.deepEqual([...new Set(statuses)], [200]);
      for (const id of ids) {
        const variant = await first.db.selectFrom('variants').select('stock').where('id', '=', id).executeTakeFirstOrThrow();
        assert.equal(variant.stock, 940);
        const sum = await first.db.selectFrom('stock_movements').select((eb) => eb.fn.sum<number>('delta').as('sum')).where('variant_id', '=', id).executeTakeFirstOrThrow();
        assert.equal(Number(sum.sum), 940);
      }
    } finally {
      await second.app.close();
      await first.close();
    }
  });
});
