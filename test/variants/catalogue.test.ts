import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { buildTestApp, createUser, loginAdmin, problemOf, type Session, type TestApp } from '../helpers/test-app.js';

const variant = (overrides: Record<string, unknown> = {}) => ({
  product_id: `p-${randomUUID().slice(0, 8)}`,
  sku: `SKU-${randomUUID().slice(0, 12)}`,
  name: 'Plain shirt',
  price: 1000,
  ...overrides,
});

describe('the catalogue of variants', () => {
  let testApp: TestApp;
  let admin: Session;
  let customer: Session;
  before(async () => {
    testApp = await buildTestApp();
    admin = await loginAdmin(testApp.app);
    customer = await createUser(testApp.app);
  });
  after(() => testApp.close());

  const inject = (request: InjectOptions) => testApp.app.inject(request);
  const create = async (body: Record<string, unknown>) => {
    const response = await inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: body });
    assert.equal(response.statusCode, 201, response.body);
    return response.json();
  };
  const stored = (id: string) => testApp.db.selectFrom('variants').selectAll().where('id', '=', id).executeTakeFirst();

  it('creates a variant under an id the service picks, with Location and ETag; customers may not', async () => {
    const response = await inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: variant({ name: '  Padded name  ' }) });
    assert.equal(response.statusCode, 201);
    const body = response.json();
    assert.match(body.id, /^[0-9a-f-]{36}$/);
    assert.equal(response.headers.location, `/api/variants/${body.id}`);
    assert.equal(response.headers.etag, '"1"');
    assert.equal(body.name, 'Padded name', 'names are stored trimmed');
    assert.equal((await stored(body.id))?.name, 'Padded name');
    const forbidden = await inject({ method: 'POST', url: '/api/variants', headers: customer.auth, payload: variant() });
    assert.equal(problemOf(forbidden).code, 'forbidden');
    const blank = await inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: variant({ name: '   ' }) });
    assert.equal(blank.statusCode, 400);
    assert.deepEqual(problemOf(blank).errors, [{ path: '/name', message: 'must not be blank' }]);
  });

  it('browses newest first and searches SKU and name without regard to case, with product and stock filters', async () => {
    const marker = randomUUID().slice(0, 8);
    const product = `search-${marker}`;
    const first = await create(variant({ product_id: product, sku: `ALPHA-${marker}`, name: 'Linen shirt', stock: 0, attributes: { size: 'S' } }));
    const second = await create(variant({ product_id: product, sku: `BETA-${marker}`, name: `Wool ${marker} jumper`, stock: 3, attributes: { size: 'M' } }));
    const third = await create(variant({ sku: `GAMMA-${marker}`, name: 'Cotton 100% tee', stock: 5 }));
    const list = async (query: string) => {
      const response = await inject({ method: 'GET', url: `/api/variants?${query}`, headers: customer.auth });
      assert.equal(response.statusCode, 200, response.body);
      return response.json();
    };
    const all = await list(`q=${marker}&include_total=true`);
    assert.deepEqual(all.items.map((item: { id: string }) => item.id), [third.id, second.id, first.id]);
    assert.equal(all.total, 3);
    assert.deepEqual((await list(`q=alpha-${marker}`)).items.map((item: { id: string }) => item.id), [first.id], 'SKU in any case');
    assert.deepEqual((await list(`q=${marker.toUpperCase()}%20JUMPER`)).items.map((item: { id: string }) => item.id), [second.id], 'name in any case');
    assert.deepEqual((await list(`product_id=${product}`)).items.map((item: { id: string }) => item.id), [second.id, first.id]);
    assert.deepEqual((await list(`product_id=${product}&in_stock=true`)).items.map((item: { id: string }) => item.id), [second.id]);
    assert.deepEqual((await list(`product_id=${product}&in_stock=false`)).items.map((item: { id: string }) => item.id), [first.id]);
    assert.equal((await list('q=100%25%20tee')).items.some((item: { id: string }) => item.id === third.id), true, '% is taken literally');
    const page = await list(`q=${marker}&limit=2`);
    assert.equal(page.items.length, 2);
    const rest = await list(`q=${marker}&limit=2&cursor=${page.next_cursor}`);
    assert.deepEqual(rest.items.map((item: { id: string }) => item.id), [first.id]);
    assert.equal(rest.next_cursor, null);
  });

  it('patches as a JSON merge patch: left out stays, null takes the default, attributes merge key by key', async () => {
    const created = await create(variant({ stock: 7, attributes: { size: 'M', colour: 'navy' } }));
    const url = `/api/variants/${created.id}`;
    const patched = await inject({
      method: 'PATCH',
      url,
      headers: { ...admin.auth, 'content-type': 'application/merge-patch+json', 'if-match': '"1"' },
      payload: JSON.stringify({ price: 2499, attributes: { colour: null, fit: 'slim' } }),
    });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.equal(patched.headers.etag, '"2"');
    assert.deepEqual(
      { price: patched.json().price, stock: patched.json().stock, attributes: patched.json().attributes, sku: patched.json().sku },
      { price: 2499, stock: 7, attributes: { size: 'M', fit: 'slim' }, sku: created.sku },
    );
    const nothing = await inject({ method: 'PATCH', url, headers: admin.auth, payload: {} });
    assert.equal(nothing.statusCode, 200);
    assert.equal(nothing.json().version, 2, '{} changes nothing and keeps the version');
    const defaults = await inject({ method: 'PATCH', url, headers: admin.auth, payload: { stock: null, attributes: null } });
    assert.deepEqual({ stock: defaults.json().stock, attributes: defaults.json().attributes }, { stock: 0, attributes: {} });
    const required = await inject({ method: 'PATCH', url, headers: admin.auth, payload: { sku: null, price: -1 } });
    assert.equal(required.statusCode, 400);
    assert.deepEqual(problemOf(required).errors?.map((error) => error.path).sort(), ['/price', '/sku']);
    const stale = await inject({ method: 'PATCH', url, headers: { ...admin.auth, 'if-match': '"1"' }, payload: { price: 1 } });
    assert.equal(problemOf(stale).code, 'precondition_failed');
    const tooMany = Object.fromEntries(Array.from({ length: 21 }, (_, index) => [`key${index}`, 'v']));
    const merged = await inject({ method: 'PATCH', url, headers: admin.auth, payload: { attributes: tooMany } });
    assert.equal(merged.statusCode, 400, 'the merged result is validated as a whole');
    assert.deepEqual(problemOf(merged).errors, [{ path: '/attributes', message: 'must have at most 20 keys' }]);
    assert.equal((await stored(created.id))?.price, 2499, 'nothing of the refused patches was stored');
    const missing = await inject({ method: 'PATCH', url: `/api/variants/${randomUUID()}`, headers: admin.auth, payload: { price: 1 } });
    assert.equal(missing.statusCode, 404);
  });

  it('runs a batch in one transaction: all or nothing, each result as its single call would answer', async () => {
    const existing = await create(variant());
    const doomed = await create(variant());
    const product = `batch-${randomUUID().slice(0, 8)}`;
    const chosenId = randomUUID();
    const ok = await inject({
      method: 'POST',
      url: '/api/variants/batch',
      headers: admin.auth,
      payload: {
        operations: [
          { op: 'create', variant: variant({ product_id: product, attributes: { size: 'S' } }) },
          { op: 'create', id: chosenId.toUpperCase(), variant: variant({ product_id: product, attributes: { size: 'M' } }) },
          { op: 'update', id: existing.id, if_match: '"1"', variant: { ...variant(), sku: existing.sku, price: 5 } },
          { op: 'delete', id: doomed.id },
        ],
      },
    });
    assert.equal(ok.statusCode, 200, ok.body);
    const results = ok.json().results;
    assert.deepEqual(results.map((result: { op: string; status: number }) => [result.op, result.status]), [['create', 201], ['create', 201], ['update', 200], ['delete', 204]]);
    assert.equal(results[1].id, chosenId);
    assert.equal(results[2].variant.price, 5);
    assert.equal(await stored(doomed.id), undefined);

    const other = await create(variant());
    const before = await testApp.db.selectFrom('variants').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const failing = await inject({
      method: 'POST',
      url: '/api/variants/batch',
      headers: admin.auth,
      payload: {
        operations: [
          { op: 'create', variant: variant() },
          { op: 'update', id: existing.id, variant: { ...variant(), price: 9 } },
          { op: 'create', variant: variant({ sku: other.sku.toLowerCase() }) },
        ],
      },
    });
    assert.equal(failing.statusCode, 409);
    const problem = problemOf(failing);
    assert.equal(problem.code, 'sku_taken');
    assert.equal(problem.errors?.[0]?.path, '/operations/2');
    const afterwards = await testApp.db.selectFrom('variants').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    assert.equal(Number(afterwards.n), Number(before.n), 'nothing of the failed batch was stored');
    assert.equal((await stored(existing.id))?.price, 5);

    const missing = await inject({ method: 'POST', url: '/api/variants/batch', headers: admin.auth, payload: { operations: [{ op: 'delete', id: randomUUID() }] } });
    assert.equal(missing.statusCode, 404);
    assert.equal(problemOf(missing).errors?.[0]?.path, '/operations/0');
    const stale = await inject({ method: 'POST', url: '/api/variants/batch', headers: admin.auth, payload: { operations: [{ op: 'delete', id: existing.id, if_match: '"1"' }] } });
    assert.equal(problemOf(stale).code, 'precondition_failed');

    const malformed = await inject({
      method: 'POST',
      url: '/api/variants/batch',
      headers: admin.auth,
      payload: { operations: [{ op: 'delete', id: existing.id }, { op: 'create', variant: { ...variant(), sku: 'bad sku!' } }] },
    });
    assert.equal(malformed.statusCode, 400);
    assert.deepEqual(problemOf(malformed).errors?.map((error) => error.path), ['/operations/1/variant/sku']);
    const empty = await inject({ method: 'POST', url: '/api/variants/batch', headers: admin.auth, payload: { operations: [] } });
    assert.equal(empty.statusCode, 400);
    const tooMany = await inject({
      method: 'POST',
      url: '/api/variants/batch',
      headers: admin.auth,
      payload: { operations: Array.from({ length: 101 }, () => ({ op: 'delete', id: randomUUID() })) },
    });
    assert.equal(tooMany.statusCode, 400);
    const customerBatch = await inject({ method: 'POST', url: '/api/variants/batch', headers: customer.auth, payload: { operations: [{ op: 'delete', id: existing.id }] } });
    assert.equal(customerBatch.statusCode, 403);
  });

  it('accepts a batch body up to 256 KiB, and keeps /batch a literal segment', async () => {
    const attributes = Object.fromEntries(Array.from({ length: 5 }, (_, index) => [`note${index}`, 'x'.repeat(190)]));
    const operations = Array.from({ length: 100 }, () => ({ op: 'create', variant: variant({ name: 'n'.repeat(190), attributes }) }));
    const body = JSON.stringify({ operations });
    assert.ok(body.length > 64 * 1024 && body.length < 256 * 1024, `${body.length} bytes`);
    const big = await inject({ method: 'POST', url: '/api/variants/batch', headers: { ...admin.auth, 'content-type': 'application/json' }, payload: body });
    assert.equal(big.statusCode, 200, big.body.slice(0, 300));
    const get = await inject({ method: 'GET', url: '/api/variants/batch', headers: admin.auth });
    assert.equal(get.statusCode, 405);
    assert.equal(get.headers.allow, 'POST');
  });

  it('answers a conditional GET whose If-None-Match names the current ETag with 304 and no body', async () => {
    const created = await create(variant());
    for (const url of [`/api/variants/${created.id}`, `/api/variants/sku/${created.sku.toLowerCase()}`]) {
      const fresh = await inject({ method: 'GET', url, headers: { ...customer.auth, 'if-none-match': '"1"' } });
      assert.equal(fresh.statusCode, 304, url);
      assert.equal(fresh.body, '');
      assert.equal(fresh.headers.etag, '"1"');
      const changed = await inject({ method: 'GET', url, headers: { ...customer.auth, 'if-none-match': '"0", "7"' } });
      assert.equal(changed.statusCode, 200);
      assert.equal(changed.json().id, created.id);
    }
  });
});
