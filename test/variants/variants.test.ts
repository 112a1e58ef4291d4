import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { buildTestApp, createUser, loginAdmin, problemOf, type Session, type TestApp } from '../helpers/test-app.js';

const unique = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

describe('variants', () => {
  let testApp: TestApp;
  let admin: Session;
  let manager: Session;
  let user: Session;

  before(async () => {
    testApp = await buildTestApp();
    admin = await loginAdmin(testApp.app);
    manager = await createUser(testApp.app, { role: 'manager', admin });
    user = await createUser(testApp.app);
  });
  after(() => testApp.close());

  const inject = (options: InjectOptions) => testApp.app.inject(options);
  const body = (overrides: Record<string, unknown> = {}) => ({
    product_id: unique('prod'),
    sku: unique('SKU'),
    name: 'Linen shirt',
    price: 4999,
    ...overrides,
  });
  const create = (payload: object, id: string = randomUUID(), session: Session = manager) =>
    inject({ method: 'POST', url: `/api/variants/${id}`, headers: session.auth, payload });
  const stored = (id: string) => testApp.db.selectFrom('variants').selectAll().where('id', '=', id).executeTakeFirst();

  it('creates a variant under the client-chosen id: 201, Location, ETag, defaults', async () => {
    const id = randomUUID();
    const payload = body();
    const response = await create(payload, id.toUpperCase());
    assert.equal(response.statusCode, 201);
    const variant = response.json();
    assert.equal(variant.id, id);
    assert.equal(response.headers.location, `/api/variants/${id}`);
    assert.equal(response.headers.etag, '"1"');
    assert.deepEqual(
      { ...variant, created_at: undefined, updated_at: undefined },
      { id, ...payload, currency: 'USD', stock: 0, reserved: 0, available: 0, attributes: {}, version: 1, created_at: undefined, updated_at: undefined },
    );
    assert.equal((await stored(id))?.sku, payload.sku);
  });

  it('reads a variant by id and by SKU in any letter case', async () => {
    const payload = body({ sku: unique('MiXeD'), attributes: { color: 'blue' }, stock: 3 });
    const id = randomUUID();
    await create(payload, id);
    for (const url of [`/api/variants/${id}`, `/api/variants/${id.toUpperCase()}`, `/api/variants/sku/${payload.sku.toLowerCase()}`, `/api/variants/sku/${payload.sku.toUpperCase()}`]) {
      const response = await inject({ method: 'GET', url, headers: user.auth });
      assert.equal(response.statusCode, 200, url);
      assert.equal(response.json().id, id);
      assert.deepEqual(response.json().attributes, { color: 'blue' });
      assert.equal(response.headers.etag, '"1"');
    }
    const missing = await inject({ method: 'GET', url: '/api/variants/sku/NO-SUCH-SKU', headers: user.auth });
    assert.equal(missing.statusCode, 404);
    assert.equal(problemOf(missing).code, 'not_found');
    const missingId = await inject({ method: 'GET', url: `/api/variants/${randomUUID()}`, headers: user.auth });
    assert.equal(missingId.statusCode, 404);
  });

  it('reports conflicts: variant_exists, sku_taken (any case), duplicate_attributes ({} equals {})', async () => {
    const id = randomUUID();
    const first = body({ attributes: { size: 'M', color: 'red' } });
    assert.equal((await create(first, id)).statusCode, 201);

    const sameId = await create(body(), id);
    assert.equal(sameId.statusCode, 409);
    assert.equal(problemOf(sameId).code, 'variant_exists');

    const sameSku = await create(body({ sku: first.sku.toLowerCase() }));
    assert.equal(sameSku.statusCode, 409);
    assert.equal(problemOf(sameSku).code, 'sku_taken');

    const sameAttributes = await create(body({ product_id: first.product_id, attributes: { color: 'red', size: 'M' } }));
    assert.equal(sameAttributes.statusCode, 409);
    assert.equal(problemOf(sameAttributes).code, 'duplicate_attributes');

    const product = unique('plain');
    assert.equal((await create(body({ product_id: product }))).statusCode, 201);
    const secondPlain = await create(body({ product_id: product, attributes: {} }));
    assert.equal(secondPlain.statusCode, 409);
    assert.equal(problemOf(secondPlain).code, 'duplicate_attributes');

    const otherProduct = await create(body({ attributes: { size: 'M', color: 'red' } }));
    assert.equal(otherProduct.statusCode, 201, 'equal attributes on another product are fine');
  });

  it('validates every field bound', async () => {
    const tooManyAttributes = Object.fromEntries(Array.from({ length: 21 }, (_, index) => [`k${index}`, 'v']));
    const invalid = [
      { product_id: '' },
      { product_id: '-starts-with-dash' },
      { product_id: 'x'.repeat(65) },
      { product_id: 'has space' },
      { sku: '' },
      { sku: '_abc' },
      { sku: 'a:b' },
      { sku: 'x'.repeat(65) },
      { name: '' },
      { name: 'x'.repeat(201) },
      { price: -1 },
      { price: 1e12 + 1 },
      { price: 9.99 },
      { price: '100' },
      { stock: -1 },
      { stock: 1e9 + 1 },
      { attributes: tooManyAttributes },
      { attributes: { '': 'empty key' } },
      { attributes: { ['k'.repeat(51)]: 'v' } },
      { attributes: { key: 'v'.repeat(201) } },
      { attributes: { key: 5 } },
      { attributes: ['a'] },
      { currency: 'EUR' },
    ];
    for (const overrides of invalid) {
      const response = await create(body(overrides));
      assert.equal(response.statusCode, 400, JSON.stringify(overrides).slice(0, 60));
      assert.equal(problemOf(response).code, 'validation_failed');
    }
    const edges = [
      { product_id: 'a', sku: unique('e1'), price: 0, stock: 0 },
      { product_id: `A:b.c-${'x'.repeat(57)}`, price: 1e12, stock: 1e9 },
      { attributes: Object.fromEntries(Array.from({ length: 20 }, (_, index) => [`${'k'.repeat(48)}${index}`.slice(-50), 'v'.repeat(200)])) },
    ];
    for (const overrides of edges) {
      const response = await create(body(overrides));
      assert.equal(response.statusCode, 201, JSON.stringify(overrides).slice(0, 60));
    }
  });

  it('answers 400 invalid_parameter for malformed path parameters', async () => {
    for (const url of [`/api/variants/sku/${'x'.repeat(300)}`, '/api/variants/sku/-bad', `/api/variants/product/${'p'.repeat(65)}`, '/api/variants/not-a-uuid']) {
      const response = await inject({ method: 'GET', url, headers: user.auth });
      assert.equal(response.statusCode, 400, url.slice(0, 40));
      assert.equal(problemOf(response).code, 'invalid_parameter');
    }
  });

  it('replaces a variant with PUT: left-out optional fields take defaults, version grows, may move product', async () => {
    const id = randomUUID();
    await create(body({ stock: 9, attributes: { size: 'L' } }), id);
    const replacement = body({ name: 'Renamed' });
    const response = await inject({ method: 'PUT', url: `/api/variants/${id}`, headers: { ...admin.auth, 'if-match': '"1"' }, payload: replacement });
    assert.equal(response.statusCode, 200);
    assert.equal(response.json().stock, 0);
    assert.deepEqual(response.json().attributes, {});
    assert.equal(response.json().product_id, replacement.product_id);
    assert.equal(response.json().version, 2);
    assert.equal(response.headers.etag, '"2"');
    const row = await stored(id);
    assert.equal(row?.name, 'Renamed');
    const missing = await inject({ method: 'PUT', url: `/api/variants/${randomUUID()}`, headers: admin.auth, payload: body() });
    assert.equal(missing.statusCode, 404);
  });

  it('honours If-Match on PUT and DELETE: 412 and nothing changed', async () => {
    const id = randomUUID();
    const original = body();
    await create(original, id);
    const stalePut = await inject({ method: 'PUT', url: `/api/variants/${id}`, headers: { ...manager.auth, 'if-match': '"2"' }, payload: body() });
    assert.equal(stalePut.statusCode, 412);
    assert.equal(problemOf(stalePut).code, 'precondition_failed');
    const staleDelete = await inject({ method: 'DELETE', url: `/api/variants/${id}`, headers: { ...manager.auth, 'if-match': '"5"' } });
    assert.equal(staleDelete.statusCode, 412);
    assert.equal((await stored(id))?.sku, original.sku);
    const deleted = await inject({ method: 'DELETE', url: `/api/variants/${id}`, headers: { ...manager.auth, 'if-match': '"1"' } });
    assert.equal(deleted.statusCode, 204);
    assert.equal(await stored(id), undefined);
  });

  it('deletes for good: 404 afterwards, and the id and SKU may be used again', async () => {
    const id = randomUUID();
    const payload = body();
    await create(payload, id);
    assert.equal((await inject({ method: 'DELETE', url: `/api/variants/${id}`, headers: manager.auth })).statusCode, 204);
    assert.equal((await inject({ method: 'GET', url: `/api/variants/${id}`, headers: user.auth })).statusCode, 404);
    assert.equal((await inject({ method: 'DELETE', url: `/api/variants/${id}`, headers: manager.auth })).statusCode, 404);
    assert.equal((await create(payload, id)).statusCode, 201);
  });

  it('refuses plain users on writes (403) and anonymous callers everywhere (401)', async () => {
    const id = randomUUID();
    const denied = await create(body(), id, user);
    assert.equal(denied.statusCode, 403);
    assert.equal(problemOf(denied).code, 'forbidden');
    assert.equal(await stored(id), undefined);
    await create(body(), id);
    for (const request of [
      { method: 'PUT' as const, url: `/api/variants/${id}`, payload: body() },
      { method: 'DELETE' as const, url: `/api/variants/${id}` },
    ]) {
      assert.equal((await inject({ ...request, headers: user.auth })).statusCode, 403);
      assert.equal((await inject(request)).statusCode, 401);
    }
    for (const url of [`/api/variants/${id}`, '/api/variants/sku/abc', '/api/variants/product/p']) {
      assert.equal((await inject({ method: 'GET', url })).statusCode, 401);
    }
    assert.equal((await create(body(), randomUUID(), admin)).statusCode, 201);
  });

  it("pages a product's variants oldest first; an unknown product is an empty page", async () => {
    const product = unique('paged');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const id = randomUUID();
      ids.push(id);
      await create(body({ product_id: product, attributes: { n: String(i) } }), id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const url: string = `/api/variants/product/${product}?limit=2&include_total=true${cursor ? `&cursor=${cursor}` : ''}`;
      const page = await inject({ method: 'GET', url, headers: user.auth });
      assert.equal(page.statusCode, 200);
      if (!cursor) assert.equal(page.json().total, 5);
      seen.push(...page.json().items.map((item: { id: string }) => item.id));
      cursor = page.json().next_cursor;
      const late = randomUUID();
      ids.push(late);
      await create(body({ product_id: product, attributes: { late } }), late);
    } while (cursor);
    assert.equal(new Set(seen).size, seen.length, 'no variant twice');
    assert.deepEqual(seen, ids.slice(0, seen.length), 'oldest first, late inserts at the end');
    assert.ok(seen.length >= 5);
    const empty = await inject({ method: 'GET', url: '/api/variants/product/nothing-here', headers: user.auth });
    assert.deepEqual(empty.json(), { items: [], next_cursor: null });
  });
});
