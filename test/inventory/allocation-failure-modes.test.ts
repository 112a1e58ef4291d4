import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { transactionRetries } from '../../src/db/transaction.js';
import { newVariantBody, onPostgres, problemOf, useAppWithAdmin, useTwoInstancesWithAdmin } from '../helpers/test-app.js';

const uniqueCode = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;
const byLocation = (allocations: { location_id: string; quantity: number }[]) => Object.fromEntries(allocations.map((allocation) => [allocation.location_id, allocation.quantity]));

/**
 * Four ways stock at several locations went wrong in medusajs/medusa, each named by its issue,
 * and what API.md section 21 makes of them here.
 */
describe('allocation failure modes seen in medusajs/medusa', () => {
  const fixture = useAppWithAdmin();
  const asAdmin = (request: InjectOptions) => fixture.app.inject({ ...request, headers: { ...fixture.admin.auth, ...request.headers } });
  const createVariant = async () => (await asAdmin({ method: 'POST', url: '/api/variants', payload: newVariantBody(0, 'fm') })).json() as { id: string };
  const createLocation = async (body: Record<string, unknown> = {}) => (await asAdmin({ method: 'POST', url: '/api/locations', payload: { code: uniqueCode('fm'), name: 'Store', ...body } })).json() as { id: string };
  const defaultId = async () => (await fixture.db.selectFrom('locations').select('id').where('is_default', '=', true).executeTakeFirstOrThrow()).id;
  const stockAt = async (variantId: string, locationId: string, stock: number) =>
    assert.equal((await asAdmin({ method: 'PUT', url: `/api/variants/${variantId}/stock`, payload: { stock, location_id: locationId, reason: 'count' } })).statusCode, 200);
  const levels = async (variantId: string) =>
    Object.fromEntries(
      (await fixture.db.selectFrom('stock_levels').select(['location_id', 'stock', 'reserved']).where('variant_id', '=', variantId).execute()).map((level) => [level.location_id, [level.stock, level.reserved]]),
    );
  const reserve = (payload: Record<string, unknown>) => asAdmin({ method: 'POST', url: '/api/reservations', payload });

  it('medusajs/medusa#14987 (checkout confirms stock summed over locations, then reserves it all at the first): a line larger than any one location splits; split:false is 409 insufficient_stock', async () => {
    const variant = await createVariant();
    const theDefault = await defaultId();
    const store = await createLocation({ priority: 500 });
    await stockAt(variant.id, theDefault, 3);
    await stockAt(variant.id, store.id, 3);
    const whole = await reserve({ lines: [{ variant_id: variant.id, quantity: 5 }], split: false });
    assert.equal(whole.statusCode, 409);
    assert.equal(problemOf(whole).code, 'insufficient_stock');
    assert.deepEqual(problemOf(whole).errors?.map((error) => error.path), ['/lines/0']);
    assert.deepEqual(await levels(variant.id), { [theDefault]: [3, 0], [store.id]: [3, 0] }, 'nothing held by the refusal');
    const split = await reserve({ lines: [{ variant_id: variant.id, quantity: 5 }] });
    assert.equal(split.statusCode, 201, split.body);
    assert.deepEqual(byLocation(split.json().lines[0].allocations), { [theDefault]: 3, [store.id]: 2 });
    assert.deepEqual(await levels(variant.id), { [theDefault]: [3, 3], [store.id]: [3, 2] }, 'no location holds more reserved than stock');
  });

  it('medusajs/medusa#15132 (reservation placed blindly at location_ids[0], where the item is not stocked): it goes to the first location that has it', async () => {
    const variant = await createVariant();
    const theDefault = await defaultId();
    const first = await createLocation({ priority: 0 });
    const stocked = await createLocation({ priority: 900 });
    await stockAt(variant.id, first.id, 0);
    await stockAt(variant.id, stocked.id, 4);
    const held = await reserve({ lines: [{ variant_id: variant.id, quantity: 2 }] });
    assert.equal(held.statusCode, 201, held.body);
    assert.deepEqual(held.json().lines[0].allocations, [{ location_id: stocked.id, quantity: 2 }], 'not the first location by priority, nor the default: neither stocks it');
    assert.deepEqual(await levels(variant.id), { [first.id]: [0, 0], [stocked.id]: [4, 2] });
    assert.equal(await fixture.db.selectFrom('stock_levels').select('reserved').where('variant_id', '=', variant.id).where('location_id', '=', theDefault).executeTakeFirst(), undefined);
  });

  it('medusajs/medusa#16488 (a reservation moved to a location without checking its stock): reallocating to a location without the units is 409 and changes nothing', async () => {
    const variant = await createVariant();
    const theDefault = await defaultId();
    const thin = await createLocation({ priority: 500 });
    await stockAt(variant.id, theDefault, 5);
    await stockAt(variant.id, thin.id, 1);
    const held = (await reserve({ lines: [{ variant_id: variant.id, quantity: 3 }] })).json();
    const before = await fixture.db.selectFrom('reservation_allocations').selectAll().where('reservation_id', '=', held.id).execute();
    const moved = await asAdmin({ method: 'POST', url: `/api/reservations/${held.id}/reallocate`, payload: { lines: [{ variant_id: variant.id, allocations: [{ location_id: thin.id, quantity: 3 }] }] } });
    assert.equal(moved.statusCode, 409);
    assert.equal(problemOf(moved).code, 'insufficient_stock');
    assert.deepEqual(problemOf(moved).errors?.map((error) => error.path), ['/lines/0']);
    assert.deepEqual(await fixture.db.selectFrom('reservation_allocations').selectAll().where('reservation_id', '=', held.id).execute(), before);
    assert.deepEqual(await levels(variant.id), { [theDefault]: [5, 3], [thin.id]: [1, 0] });
    const read = (await asAdmin({ method: 'GET', url: `/api/reservations/${held.id}` })).json();
    assert.deepEqual(read.lines[0].allocations, [{ location_id: theDefault, quantity: 3 }]);
    assert.equal(read.updated_at, held.updated_at);
  });
});

describe('allocation failure modes seen in medusajs/medusa, under concurrency (PostgreSQL, two instances)', { skip: !onPostgres && 'needs PostgreSQL' }, () => {
  const fixture = useTwoInstancesWithAdmin();
  const instance = (index: number) => (index % 2 ? fixture.second.app : fixture.first.app);

  it('medusajs/medusa#16569 (concurrent reservations oversubscribing one location): 60 racing reservations, named there or not, never hold more than its stock', { timeout: 120_000 }, async () => {
    const post = (index: number, url: string, payload: object, headers: Record<string, string> = {}) => instance(index).inject({ method: 'POST', url, headers: { ...fixture.admin.auth, ...headers }, payload });
    const store = await post(0, '/api/locations', { code: uniqueCode('fm'), name: 'Store', priority: 0 });
    assert.equal(store.statusCode, 201, store.body);
    const storeId = store.json().id as string;
    const variant = (await post(0, '/api/variants', newVariantBody(0, 'fm'))).json() as { id: string };
    assert.equal((await fixture.first.app.inject({ method: 'PUT', url: `/api/variants/${variant.id}/stock`, headers: fixture.admin.auth, payload: { stock: 20, location_id: storeId, reason: 'count' } })).statusCode, 200);
    const deadlocksBefore = transactionRetries.deadlock;
    // Each asks for 2 units, 120 in all for 20: half name the store, half do not (it is the first by priority and the only one stocked); every third goes through the transaction (Idempotency-Key).
    const responses = await Promise.all(
      Array.from({ length: 60 }, (_, index) =>
        post(index, '/api/reservations', { lines: [{ variant_id: variant.id, quantity: 2, ...(index % 2 ? { location_id: storeId } : {}) }], split: false }, index % 3 === 0 ? { 'idempotency-key': randomUUID() } : {}),
      ),
    );
    const statuses = responses.map((response) => response.statusCode);
    assert.equal(statuses.filter((status) => status === 201).length, 10, `exactly 20 units held: ${statuses.join(',')}`);
    assert.equal(statuses.filter((status) => status === 409).length, 50);
    assert.ok(responses.filter((response) => response.statusCode === 409).every((response) => problemOf(response).code === 'insufficient_stock'));
    assert.equal(transactionRetries.deadlock, deadlocksBefore, 'no deadlock');
    const level = await fixture.first.db.selectFrom('stock_levels').select(['stock', 'reserved']).where('variant_id', '=', variant.id).where('location_id', '=', storeId).executeTakeFirstOrThrow();
    assert.deepEqual(level, { stock: 20, reserved: 20 });
    const allocated = await fixture.first.db
      .selectFrom('reservation_allocations')
      .innerJoin('reservation_lines', (join) => join.onRef('reservation_lines.reservation_id', '=', 'reservation_allocations.reservation_id').onRef('reservation_lines.position', '=', 'reservation_allocations.position'))
      .select((eb) => eb.fn.sum<string>('reservation_allocations.quantity').as('held'))
      .where('reservation_lines.variant_id', '=', variant.id)
      .where('reservation_allocations.location_id', '=', storeId)
      .executeTakeFirstOrThrow();
    assert.equal(Number(allocated.held), 20, 'the allocations there add up to its reserved');
    const row = await fixture.first.db.selectFrom('variants').select(['stock', 'reserved']).where('id', '=', variant.id).executeTakeFirstOrThrow();
    assert.deepEqual(row, { stock: 20, reserved: 20 });
  });
});
