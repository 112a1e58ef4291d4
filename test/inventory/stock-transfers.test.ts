import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/tables.js';
import { transactionRetries } from '../../src/db/transaction.js';
import { newVariantBody, onPostgres, problemOf, useAppWithAdmin, useTwoInstancesWithAdmin } from '../helpers/test-app.js';

const uniqueCode = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

/** Each location's stock as its movements sum it and as its level holds it (they must agree). */
async function stockByMovementsAndLevels(db: Kysely<Database>, variantId: string) {
  const movements = await db.selectFrom('stock_movements').select(['location_id', 'delta']).where('variant_id', '=', variantId).execute();
  const sums: Record<string, number> = {};
  for (const movement of movements) sums[movement.location_id] = (sums[movement.location_id] ?? 0) + movement.delta;
  const levels = await db.selectFrom('stock_levels').selectAll().where('variant_id', '=', variantId).execute();
  return {
    sums: Object.fromEntries(Object.entries(sums).filter(([, sum]) => sum !== 0)),
    levels: Object.fromEntries(levels.filter((level) => level.stock !== 0).map((level) => [level.location_id, level.stock])),
    rows: levels,
  };
}

/** API.md section 21, transfers. */
describe('stock transfers', () => {
  const fixture = useAppWithAdmin();
  const asAdmin = (request: InjectOptions) => fixture.app.inject({ ...request, headers: { ...fixture.admin.auth, ...request.headers } });
  const createVariant = async (stock: number) => (await asAdmin({ method: 'POST', url: '/api/variants', payload: newVariantBody(stock, 'tr') })).json() as { id: string; version: number };
  const createLocation = async (body: Record<string, unknown> = {}) => {
    const created = await asAdmin({ method: 'POST', url: '/api/locations', payload: { code: uniqueCode('st'), name: 'Store', ...body } });
    assert.equal(created.statusCode, 201, created.body);
    return created.json() as { id: string; code: string; version: number };
  };
  const defaultId = async () => (await fixture.db.selectFrom('locations').select('id').where('is_default', '=', true).executeTakeFirstOrThrow()).id;
  const transfer = (payload: Record<string, unknown>, headers: Record<string, string> = {}) => asAdmin({ method: 'POST', url: '/api/stock-transfers', payload: { reason: 'restock', ...payload }, headers });
  const levelOf = async (variantId: string, locationId: string) =>
    (await fixture.db.selectFrom('stock_levels').select(['stock', 'reserved']).where('variant_id', '=', variantId).where('location_id', '=', locationId).executeTakeFirst()) ?? { stock: 0, reserved: 0 };

  it('moves units between two locations: one movement out and one in per line, one event each, the total unchanged; honours Idempotency-Key', async () => {
    const [one, two] = [await createVariant(10), await createVariant(3)];
    const store = await createLocation();
    const from = await defaultId();
    const body = { from_location_id: from, to_location_id: store.id.toUpperCase(), lines: [{ variant_id: two.id, quantity: 3 }, { variant_id: one.id, quantity: 4 }], reference: 'TR-1' };
    const key = { 'idempotency-key': randomUUID() };
    const moved = await transfer(body, key);
    assert.equal(moved.statusCode, 200, moved.body);
    assert.deepEqual(moved.json().items.map((item: { id: string; stock: number; available: number }) => [item.id, item.stock, item.available]), [[two.id, 3, 3], [one.id, 10, 10]]);
    assert.deepEqual([await levelOf(one.id, from), await levelOf(one.id, store.id)], [{ stock: 6, reserved: 0 }, { stock: 4, reserved: 0 }]);
    assert.deepEqual([await levelOf(two.id, from), await levelOf(two.id, store.id)], [{ stock: 0, reserved: 0 }, { stock: 3, reserved: 0 }]);
    const movements = await fixture.db.selectFrom('stock_movements').selectAll().where('variant_id', '=', one.id).where('reason', '=', 'restock').orderBy('delta').execute();
    assert.deepEqual(movements.map((movement) => [movement.location_id, movement.delta, movement.stock_after, movement.reference]), [[from, -4, 6, 'TR-1'], [store.id, 4, 4, 'TR-1']]);
    const events = await fixture.db.selectFrom('events').selectAll().where('subject_id', '=', one.id).where('type', '=', 'variant.stock_changed').execute();
    assert.deepEqual(events.map((event) => [(event.data as { location_id: string }).location_id, (event.data as { delta: number }).delta]).sort((a, b) => Number(a[1]) - Number(b[1])), [[from, -4], [store.id, 4]]);
    const replay = await transfer(body, key);
    assert.equal(replay.statusCode, 200);
    assert.deepEqual(replay.json(), moved.json());
    assert.deepEqual(await levelOf(one.id, store.id), { stock: 4, reserved: 0 }, 'the replay moved nothing');
    const check = await stockByMovementsAndLevels(fixture.db, one.id);
    assert.deepEqual(check.sums, check.levels);
    const variantRow = await fixture.db.selectFrom('variants').selectAll().where('id', '=', one.id).executeTakeFirstOrThrow();
    assert.equal(variantRow.stock, 10);
    assert.ok(variantRow.version > one.version, 'the version moves');
  });

  it("refuses a transfer below the source's reserved (409 with the lines' paths), the same location twice (400), an inactive destination (409) and unknown ids (404), moving nothing", async () => {
    const [one, two] = [await createVariant(5), await createVariant(5)];
    const from = await defaultId();
    const store = await createLocation();
    const closed = await createLocation({ status: 'inactive' });
    const held = await asAdmin({ method: 'POST', url: '/api/reservations', payload: { lines: [{ variant_id: two.id, quantity: 3 }] } });
    assert.equal(held.statusCode, 201);
    const short = await transfer({ from_location_id: from, to_location_id: store.id, lines: [{ variant_id: one.id, quantity: 5 }, { variant_id: two.id, quantity: 3 }] });
    assert.equal(problemOf(short).code, 'insufficient_stock');
    assert.deepEqual(problemOf(short).errors?.map((error) => error.path), ['/lines/1']);
    assert.deepEqual(await levelOf(one.id, store.id), { stock: 0, reserved: 0 }, 'all or nothing');

    const same = await transfer({ from_location_id: store.id, to_location_id: store.id.toUpperCase(), lines: [{ variant_id: one.id, quantity: 1 }] });
    assert.equal(problemOf(same).code, 'validation_failed');
    const inactive = await transfer({ from_location_id: from, to_location_id: closed.id, lines: [{ variant_id: one.id, quantity: 1 }] });
    assert.equal(problemOf(inactive).code, 'location_inactive');
    assert.equal(inactive.statusCode, 409);
    const unknown = await transfer({ from_location_id: randomUUID(), to_location_id: store.id, lines: [{ variant_id: one.id, quantity: 1 }] });
    assert.equal(unknown.statusCode, 404);
    assert.deepEqual(problemOf(unknown).errors?.map((error) => error.path), ['/from_location_id']);
    const noVariant = await transfer({ from_location_id: from, to_location_id: store.id, lines: [{ variant_id: one.id, quantity: 1 }, { variant_id: randomUUID(), quantity: 1 }] });
    assert.deepEqual([noVariant.statusCode, problemOf(noVariant).errors?.map((error) => error.path)], [404, ['/lines/1/variant_id']]);
    const twice = await transfer({ from_location_id: from, to_location_id: store.id, lines: [{ variant_id: one.id, quantity: 1 }, { variant_id: one.id, quantity: 1 }] });
    assert.equal(problemOf(twice).code, 'validation_failed');
    assert.equal((await transfer({ from_location_id: from, to_location_id: store.id, lines: [] })).statusCode, 400);

    // Out of an inactive location is allowed.
    assert.equal((await asAdmin({ method: 'PUT', url: `/api/variants/${one.id}/stock`, payload: { stock: 2, location_id: closed.id, reason: 'count' } })).statusCode, 200);
    const out = await transfer({ from_location_id: closed.id, to_location_id: store.id, lines: [{ variant_id: one.id, quantity: 2 }] });
    assert.equal(out.statusCode, 200, out.body);
    assert.deepEqual(await levelOf(one.id, store.id), { stock: 2, reserved: 0 });
    const check = await stockByMovementsAndLevels(fixture.db, one.id);
    assert.deepEqual(check.sums, check.levels);
  });
});

describe('transfers racing adjustments and reservations (PostgreSQL, two instances)', { skip: !onPostgres && 'needs PostgreSQL' }, () => {
  const fixture = useTwoInstancesWithAdmin();
  const instance = (index: number) => (index % 2 ? fixture.second.app : fixture.first.app);

  it('never deadlocks, never answers 500, never lets a location go below zero; each location holds the sum of its movements', { timeout: 180_000 }, async () => {
    const post = (index: number, url: string, payload: object) => instance(index).inject({ method: 'POST', url, headers: fixture.admin.auth, payload });
    const locations: string[] = [(await fixture.first.db.selectFrom('locations').select('id').where('is_default', '=', true).executeTakeFirstOrThrow()).id];
    for (const priority of [10, 200]) {
      const created = await post(0, '/api/locations', { code: uniqueCode('race'), name: 'Race', priority });
      assert.equal(created.statusCode, 201, created.body);
      locations.push(created.json().id);
    }
    const variants: string[] = [];
    for (let index = 0; index < 3; index++) {
      const created = await post(0, '/api/variants', newVariantBody(0, 'race'));
      variants.push(created.json().id);
      for (const location of locations) {
        const stocked = await instance(index).inject({ method: 'PUT', url: `/api/variants/${variants[index]}/stock`, headers: fixture.admin.auth, payload: { stock: 60, location_id: location, reason: 'start' } });
        assert.equal(stocked.statusCode, 200, stocked.body);
      }
    }
    const deadlocksBefore = transactionRetries.deadlock;
    const unexpected: string[] = [];
    const answer = (response: { statusCode: number; body: string }) => {
      if (![200, 201, 409].includes(response.statusCode)) unexpected.push(response.body);
      return response.statusCode;
    };
    const pick = <T>(list: T[], seed: number) => list[seed % list.length]!;
    const statuses = await Promise.all(
      Array.from({ length: 180 }, async (_, index) => {
        const order = index % 2 ? [...variants].reverse() : variants;
        if (index % 3 === 0) {
          const from = pick(locations, index);
          const to = pick(locations, index + 1 + (index % 2));
          const lines = order.map((variant_id, at) => ({ variant_id, quantity: 1 + ((index + at) % 4) }));
          return answer(await post(index, '/api/stock-transfers', { from_location_id: from, to_location_id: to, lines, reason: 'race' }));
        }
        if (index % 3 === 1) {
          const lines = order.map((variant_id, at) => ({ variant_id, delta: (index + at) % 2 ? 2 : -2, location_id: pick(locations, index + at) }));
          return answer(await post(index, '/api/stock-adjustments', { lines, reason: 'race' }));
        }
        const created = await post(index, '/api/reservations', { lines: order.slice(0, 2).map((variant_id) => ({ variant_id, quantity: 1 + (index % 3) })) });
        if (created.statusCode !== 201) return answer(created);
        return answer(await post(index + 1, `/api/reservations/${created.json().id}/${index % 2 ? 'commit' : 'release'}`, {}));
      }),
    );
    assert.ok(statuses.every((status) => status === 200 || status === 201 || status === 409), `only 200, 201 and 409: ${[...new Set(statuses)].join(', ')} ${unexpected.slice(0, 3).join(' | ')}`);
    assert.ok(statuses.filter((status) => status === 200).length > 60, 'most requests went through');
    assert.equal(transactionRetries.deadlock, deadlocksBefore, 'no transaction was retried after a deadlock');
    for (const variant of variants) {
      const check = await stockByMovementsAndLevels(fixture.first.db, variant);
      assert.deepEqual(check.sums, check.levels, 'each location holds the sum of its movements');
      assert.ok(check.rows.every((level) => level.stock - level.reserved >= 0 && level.reserved >= 0));
      const row = await fixture.first.db.selectFrom('variants').selectAll().where('id', '=', variant).executeTakeFirstOrThrow();
      assert.deepEqual([row.stock, row.reserved], [check.rows.reduce((sum, level) => sum + level.stock, 0), check.rows.reduce((sum, level) => sum + level.reserved, 0)], 'the kept sums');
      const allocated = await fixture.first.db
        .selectFrom('reservation_allocations')
        .innerJoin('reservation_lines', (join) => join.onRef('reservation_lines.reservation_id', '=', 'reservation_allocations.reservation_id').onRef('reservation_lines.position', '=', 'reservation_allocations.position'))
        .select(['reservation_allocations.location_id', 'reservation_allocations.quantity'])
        .where('reservation_lines.variant_id', '=', variant)
        .where('reservation_lines.active', '=', true)
        .execute();
      for (const level of check.rows) {
        const held = allocated.filter((allocation) => allocation.location_id === level.location_id).reduce((sum, allocation) => sum + allocation.quantity, 0);
        assert.equal(level.reserved, held, "a location's reserved is what its open allocations hold");
      }
    }
  });
});
