import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { newVariantBody, problemOf, useAppWithAdmin } from '../helpers/test-app.js';

const uniqueCode = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

/** API.md section 21, "Allocation": a named location, a whole line at the first location that has it, else a split unless `split: false`. */
describe('allocation of reservations over locations', () => {
  const fixture = useAppWithAdmin();
  const asAdmin = (request: InjectOptions) => fixture.app.inject({ ...request, headers: { ...fixture.admin.auth, ...request.headers } });
  const createVariant = async () => (await asAdmin({ method: 'POST', url: '/api/variants', payload: newVariantBody(0, 'al') })).json() as { id: string };
  const createLocation = async (body: Record<string, unknown> = {}) => (await asAdmin({ method: 'POST', url: '/api/locations', payload: { code: uniqueCode('al'), name: 'Store', ...body } })).json() as { id: string };
  const defaultId = async () => (await fixture.db.selectFrom('locations').select('id').where('is_default', '=', true).executeTakeFirstOrThrow()).id;
  const stockAt = async (variantId: string, locationId: string, stock: number) =>
    assert.equal((await asAdmin({ method: 'PUT', url: `/api/variants/${variantId}/stock`, payload: { stock, location_id: locationId, reason: 'count' } })).statusCode, 200);
  const level = async (variantId: string, locationId: string) =>
    (await fixture.db.selectFrom('stock_levels').select(['stock', 'reserved']).where('variant_id', '=', variantId).where('location_id', '=', locationId).executeTakeFirst()) ?? { stock: 0, reserved: 0 };
  const reserve = (payload: Record<string, unknown>) => asAdmin({ method: 'POST', url: '/api/reservations', payload });
  const byLocation = (allocations: { location_id: string; quantity: number }[]) => Object.fromEntries(allocations.map((allocation) => [allocation.location_id, allocation.quantity]));

  it('takes a line naming a location only there; an unknown location is 404, an inactive one 409 location_inactive', async () => {
    const variant = await createVariant();
    const theDefault = await defaultId();
    const store = await createLocation({ priority: 500 });
    const closed = await createLocation({ status: 'inactive' });
    await stockAt(variant.id, theDefault, 10);
    await stockAt(variant.id, store.id, 3);
    await stockAt(variant.id, closed.id, 5);
    const named = await reserve({ lines: [{ variant_id: variant.id, quantity: 2, location_id: store.id.toUpperCase() }] });
    assert.equal(named.statusCode, 201, named.body);
    assert.deepEqual(named.json().lines[0].allocations, [{ location_id: store.id, quantity: 2 }]);
    assert.deepEqual([await level(variant.id, store.id), await level(variant.id, theDefault)], [{ stock: 3, reserved: 2 }, { stock: 10, reserved: 0 }]);
    const short = await reserve({ lines: [{ variant_id: variant.id, quantity: 2, location_id: store.id }] });
    assert.equal(problemOf(short).code, 'insufficient_stock', 'one unit left there, though the default has ten');
    const inactive = await reserve({ lines: [{ variant_id: variant.id, quantity: 1 }, { variant_id: (await createVariant()).id, quantity: 1, location_id: closed.id }] });
    assert.equal(problemOf(inactive).code, 'location_inactive');
    assert.deepEqual(problemOf(inactive).errors?.map((error) => error.path), ['/lines/1/location_id']);
    const unknown = await reserve({ lines: [{ variant_id: variant.id, quantity: 1, location_id: randomUUID() }] });
    assert.equal(unknown.statusCode, 404);
    assert.deepEqual(problemOf(unknown).errors?.map((error) => error.path), ['/lines/0/location_id']);
    assert.equal((await level(variant.id, theDefault)).reserved, 0, 'nothing held by the refusals');

    const committed = await asAdmin({ method: 'POST', url: `/api/reservations/${named.json().id}/commit` });
    assert.equal(committed.statusCode, 200);
    assert.deepEqual(committed.json().lines[0].allocations, [{ location_id: store.id, quantity: 2 }]);
    assert.deepEqual(await level(variant.id, store.id), { stock: 1, reserved: 0 });
    const movement = await fixture.db.selectFrom('stock_movements').selectAll().where('variant_id', '=', variant.id).where('reason', '=', 'reservation committed').executeTakeFirstOrThrow();
    assert.deepEqual([movement.location_id, movement.delta, movement.stock_after], [store.id, -2, 1]);
  });

  it('splits a line no location can hold whole, greedily by priority; split:false refuses it; commit writes one movement per allocation', async () => {
    const [variant, other] = [await createVariant(), await createVariant()];
    const theDefault = await defaultId();
    const early = await createLocation({ priority: 5 });
    const late = await createLocation({ priority: 900 });
    await stockAt(variant.id, early.id, 2);
    await stockAt(variant.id, theDefault, 3);
    await stockAt(variant.id, late.id, 4);
    await stockAt(other.id, theDefault, 1);

    const whole = await reserve({ lines: [{ variant_id: variant.id, quantity: 7 }], split: false });
    assert.equal(problemOf(whole).code, 'insufficient_stock');
    assert.deepEqual(problemOf(whole).errors?.map((error) => error.path), ['/lines/0']);
    assert.deepEqual((await fixture.db.selectFrom('variants').select('reserved').where('id', '=', variant.id).executeTakeFirstOrThrow()).reserved, 0);

    const split = await reserve({ lines: [{ variant_id: other.id, quantity: 1 }, { variant_id: variant.id, quantity: 7 }] });
    assert.equal(split.statusCode, 201, split.body);
    assert.deepEqual(byLocation(split.json().lines[1].allocations), { [early.id]: 2, [theDefault]: 3, [late.id]: 2 });
    assert.deepEqual(split.json().lines[0].allocations, [{ location_id: theDefault, quantity: 1 }]);
    assert.deepEqual([await level(variant.id, early.id), await level(variant.id, theDefault), await level(variant.id, late.id)], [
      { stock: 2, reserved: 2 },
      { stock: 3, reserved: 3 },
      { stock: 4, reserved: 2 },
    ]);
    const read = await asAdmin({ method: 'GET', url: `/api/reservations/${split.json().id}` });
    assert.deepEqual(read.json(), split.json(), 'the allocations as stored');
    assert.equal(problemOf(await reserve({ lines: [{ variant_id: variant.id, quantity: 3 }] })).code, 'insufficient_stock', 'two left in all');

    const committed = await asAdmin({ method: 'POST', url: `/api/reservations/${split.json().id}/commit` });
    assert.equal(committed.statusCode, 200);
    const movements = await fixture.db.selectFrom('stock_movements').selectAll().where('variant_id', '=', variant.id).where('reason', '=', 'reservation committed').execute();
    assert.deepEqual(Object.fromEntries(movements.map((movement) => [movement.location_id, [movement.delta, movement.stock_after]])), {
      [early.id]: [-2, 0],
      [theDefault]: [-3, 0],
      [late.id]: [-2, 2],
    });
    const row = await fixture.db.selectFrom('variants').selectAll().where('id', '=', variant.id).executeTakeFirstOrThrow();
    assert.deepEqual([row.stock, row.reserved], [2, 0]);
  });

  it('releases a split line at each of its locations', async () => {
    const variant = await createVariant();
    const theDefault = await defaultId();
    const store = await createLocation({ priority: 300 });
    await stockAt(variant.id, theDefault, 1);
    await stockAt(variant.id, store.id, 1);
    const split = await reserve({ lines: [{ variant_id: variant.id, quantity: 2 }] });
    assert.equal(split.statusCode, 201, split.body);
    assert.equal((await asAdmin({ method: 'POST', url: `/api/reservations/${split.json().id}/release` })).statusCode, 200);
    assert.deepEqual([await level(variant.id, theDefault), await level(variant.id, store.id)], [{ stock: 1, reserved: 0 }, { stock: 1, reserved: 0 }]);
    const row = await fixture.db.selectFrom('variants').selectAll().where('id', '=', variant.id).executeTakeFirstOrThrow();
    assert.deepEqual([row.stock, row.reserved], [2, 0]);
  });
});
