import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { createUser, newVariantBody, onPostgres, problemOf, useAppWithAdmin, useTwoInstancesWithAdmin } from '../helpers/test-app.js';

const uniqueCode = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

/** API.md section 21, "Reallocation": POST /api/reservations/{id}/reallocate. */
describe('reallocation of a reservation', () => {
  const fixture = useAppWithAdmin();
  const asAdmin = (request: InjectOptions) => fixture.app.inject({ ...request, headers: { ...fixture.admin.auth, ...request.headers } });
  const createVariant = async () => (await asAdmin({ method: 'POST', url: '/api/variants', payload: newVariantBody(0, 'ra') })).json() as { id: string };
  const createLocation = async (body: Record<string, unknown> = {}) =>
    (await asAdmin({ method: 'POST', url: '/api/locations', payload: { code: uniqueCode('ra'), name: 'Store', ...body } })).json() as { id: string; version: number };
  const defaultId = async () => (await fixture.db.selectFrom('locations').select('id').where('is_default', '=', true).executeTakeFirstOrThrow()).id;
  const stockAt = async (variantId: string, locationId: string, stock: number) =>
    assert.equal((await asAdmin({ method: 'PUT', url: `/api/variants/${variantId}/stock`, payload: { stock, location_id: locationId, reason: 'count' } })).statusCode, 200);
  const levels = async (variantId: string) =>
    Object.fromEntries(
      (await fixture.db.selectFrom('stock_levels').select(['location_id', 'stock', 'reserved']).where('variant_id', '=', variantId).execute()).map((level) => [level.location_id, [level.stock, level.reserved]]),
    );
  const reserve = (payload: Record<string, unknown>) => asAdmin({ method: 'POST', url: '/api/reservations', payload });
  const reallocate = (id: string, payload: unknown, headers: Record<string, string> = {}) => asAdmin({ method: 'POST', url: `/api/reservations/${id}/reallocate`, payload: payload as object, headers });
  const byLocation = (allocations: { location_id: string; quantity: number }[]) => Object.fromEntries(allocations.map((allocation) => [allocation.location_id, allocation.quantity]));
  const allocationRows = async (reservationId: string) =>
    (await fixture.db.selectFrom('reservation_allocations').select(['position', 'location_id', 'quantity']).where('reservation_id', '=', reservationId).orderBy('position').orderBy('location_id').execute()).map(
      (row) => `${row.position} ${row.location_id} ${row.quantity}`,
    );
  const variantRow = (id: string) => fixture.db.selectFrom('variants').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  it('replaces the named lines\' allocations only, moves the levels\' reserved, records reservation.reallocated and answers as GET does', async () => {
    const [moved, kept] = [await createVariant(), await createVariant()];
    const theDefault = await defaultId();
    const store = await createLocation({ priority: 500 });
    await stockAt(moved.id, theDefault, 5);
    await stockAt(moved.id, store.id, 5);
    await stockAt(kept.id, theDefault, 5);
    const created = await reserve({ lines: [{ variant_id: kept.id, quantity: 2 }, { variant_id: moved.id, quantity: 4 }], reference: 'cart-ra' });
    assert.equal(created.statusCode, 201, created.body);
    assert.deepEqual(byLocation(created.json().lines[1].allocations), { [theDefault]: 4 });
    const versionBefore = (await variantRow(moved.id)).version;

    const answer = await reallocate(created.json().id, { lines: [{ variant_id: moved.id.toUpperCase(), allocations: [{ location_id: store.id, quantity: 3 }, { location_id: theDefault, quantity: 1 }] }] });
    assert.equal(answer.statusCode, 200, answer.body);
    assert.deepEqual(byLocation(answer.json().lines[1].allocations), { [store.id]: 3, [theDefault]: 1 });
    assert.deepEqual(answer.json().lines[0].allocations, [{ location_id: theDefault, quantity: 2 }], 'the line not named keeps its allocation');
    const read = await asAdmin({ method: 'GET', url: `/api/reservations/${created.json().id}` });
    assert.deepEqual(answer.json(), read.json(), 'the reply is the reservation as stored');
    assert.deepEqual(await levels(moved.id), { [theDefault]: [5, 1], [store.id]: [5, 3] });
    assert.deepEqual(await levels(kept.id), { [theDefault]: [5, 2] });
    const row = await variantRow(moved.id);
    assert.deepEqual([row.stock, row.reserved, row.version], [10, 4, versionBefore + 1], 'the totals stay; the version moves');
    const event = await fixture.db.selectFrom('events').selectAll().where('subject_id', '=', created.json().id).where('type', '=', 'reservation.reallocated').executeTakeFirstOrThrow();
    assert.deepEqual(event.data, {
      before: { lines: [{ variant_id: moved.id, allocations: [{ location_id: theDefault, quantity: 4 }] }] },
      after: { lines: [{ variant_id: moved.id, allocations: [{ location_id: store.id, quantity: 3 }, { location_id: theDefault, quantity: 1 }].sort((a, b) => (a.location_id < b.location_id ? -1 : 1)) }] },
      reference: 'cart-ra',
    });

    // The same allocations again change nothing and record nothing.
    const again = await reallocate(created.json().id, { lines: [{ variant_id: moved.id, allocations: [{ location_id: theDefault, quantity: 1 }, { location_id: store.id, quantity: 3 }] }] });
    assert.equal(again.statusCode, 200);
    assert.equal(again.json().updated_at, answer.json().updated_at);
    assert.equal((await fixture.db.selectFrom('events').select('id').where('subject_id', '=', created.json().id).where('type', '=', 'reservation.reallocated').execute()).length, 1);

    // Commit acts on the new allocations: one movement per allocation.
    const committed = await asAdmin({ method: 'POST', url: `/api/reservations/${created.json().id}/commit` });
    assert.equal(committed.statusCode, 200, committed.body);
    assert.deepEqual(await levels(moved.id), { [theDefault]: [4, 0], [store.id]: [2, 0] });
  });

  it('counts the line\'s own allocations as released: a destination holding them may take the line whole', async () => {
    const variant = await createVariant();
    const theDefault = await defaultId();
    const store = await createLocation({ priority: 500 });
    await stockAt(variant.id, theDefault, 3);
    await stockAt(variant.id, store.id, 2);
    const created = (await reserve({ lines: [{ variant_id: variant.id, quantity: 4 }] })).json();
    assert.deepEqual(byLocation(created.lines[0].allocations), { [theDefault]: 3, [store.id]: 1 }, 'a split, the default first');
    // The store has 1 unit free; with the line's own 1 released it has 2, not 3.
    const tooMany = await reallocate(created.id, { lines: [{ variant_id: variant.id, allocations: [{ location_id: store.id, quantity: 3 }, { location_id: theDefault, quantity: 1 }] }] });
    assert.equal(problemOf(tooMany).code, 'insufficient_stock');
    assert.deepEqual(problemOf(tooMany).errors?.map((error) => error.path), ['/lines/0']);
    const fits = await reallocate(created.id, { lines: [{ variant_id: variant.id, allocations: [{ location_id: store.id, quantity: 2 }, { location_id: theDefault, quantity: 2 }] }] });
    assert.equal(fits.statusCode, 200, fits.body);
    assert.deepEqual(await levels(variant.id), { [theDefault]: [3, 2], [store.id]: [2, 2] });
  });

  it('refuses, changing nothing: a variant not of the reservation, sums that differ, a location twice (400 with paths); unknown location 404; inactive 409', async () => {
    const [variant, other, stranger] = [await createVariant(), await createVariant(), await createVariant()];
    const theDefault = await defaultId();
    const store = await createLocation({ priority: 500 });
    const closed = await createLocation({ priority: 600, status: 'inactive' });
    await stockAt(variant.id, theDefault, 5);
    await stockAt(variant.id, store.id, 5);
    await stockAt(other.id, theDefault, 5);
    const created = (await reserve({ lines: [{ variant_id: variant.id, quantity: 2 }, { variant_id: other.id, quantity: 1 }] })).json();
    const before = await allocationRows(created.id);
    const refusals: [unknown, number, string, string[]][] = [
      [{ lines: [{ variant_id: stranger.id, allocations: [{ location_id: store.id, quantity: 1 }] }, { variant_id: variant.id, allocations: [{ location_id: store.id, quantity: 3 }] }] }, 400, 'validation_failed', ['/lines/0/variant_id', '/lines/1/allocations']],
      [{ lines: [{ variant_id: variant.id, allocations: [{ location_id: store.id, quantity: 1 }, { location_id: store.id.toUpperCase(), quantity: 1 }] }] }, 400, 'validation_failed', ['/lines/0/allocations/1/location_id']],
      [{ lines: [{ variant_id: variant.id, allocations: [{ location_id: store.id, quantity: 2 }] }, { variant_id: variant.id, allocations: [{ location_id: store.id, quantity: 2 }] }] }, 400, 'validation_failed', ['/lines/1/variant_id']],
      [{ lines: [{ variant_id: variant.id, allocations: [{ location_id: store.id, quantity: 1 }, { location_id: randomUUID(), quantity: 1 }] }] }, 404, 'not_found', ['/lines/0/allocations/1/location_id']],
      [{ lines: [{ variant_id: other.id, allocations: [{ location_id: theDefault, quantity: 1 }] }, { variant_id: variant.id, allocations: [{ location_id: closed.id, quantity: 2 }] }] }, 409, 'location_inactive', ['/lines/1/allocations/0/location_id']],
      [{ lines: [{ variant_id: variant.id, allocations: [{ location_id: store.id, quantity: 2 }] }, { variant_id: other.id, allocations: [{ location_id: store.id, quantity: 1 }] }] }, 409, 'insufficient_stock', ['/lines/1']],
    ];
    for (const [payload, status, code, paths] of refusals) {
      const refused = await reallocate(created.id, payload);
      assert.equal(refused.statusCode, status, refused.body);
      assert.equal(problemOf(refused).code, code);
      assert.deepEqual(problemOf(refused).errors?.map((error) => error.path), paths);
    }
    assert.deepEqual(await allocationRows(created.id), before, 'all or nothing: the first line of the last request fitted, yet nothing moved');
    assert.deepEqual(await levels(variant.id), { [theDefault]: [5, 2], [store.id]: [5, 0] });
    assert.equal((await reallocate(randomUUID(), { lines: [{ variant_id: variant.id, allocations: [{ location_id: store.id, quantity: 2 }] }] })).statusCode, 404);
    assert.equal((await reallocate(created.id, { lines: [] })).statusCode, 400, 'at least one line');
    // A body one line over the schema's 100, each line of 50 allocations (about 300 KB), is read and refused by validation, not by size.
    const oversized = { lines: Array.from({ length: 101 }, () => ({ variant_id: randomUUID(), allocations: Array.from({ length: 50 }, () => ({ location_id: randomUUID(), quantity: 1 })) })) };
    const tooMany = await reallocate(created.id, oversized);
    assert.equal(tooMany.statusCode, 400, tooMany.body);
    assert.equal(problemOf(tooMany).code, 'validation_failed');
  });

  it('keeps units at a location made inactive, yet moves them away; only an active reservation is reallocated', async () => {
    const variant = await createVariant();
    const theDefault = await defaultId();
    const store = await createLocation({ priority: 0 });
    await stockAt(variant.id, theDefault, 5);
    await stockAt(variant.id, store.id, 5);
    const created = (await reserve({ lines: [{ variant_id: variant.id, quantity: 2 }] })).json();
    assert.deepEqual(byLocation(created.lines[0].allocations), { [store.id]: 2 });
    const closing = await asAdmin({ method: 'PATCH', url: `/api/locations/${store.id}`, payload: { status: 'inactive' } });
    assert.equal(closing.statusCode, 200, closing.body);
    assert.equal((await variantRow(variant.id)).available_at_inactive_locations, 3, 'the store\'s 3 free units leave available');
    const keep = await reallocate(created.id, { lines: [{ variant_id: variant.id, allocations: [{ location_id: store.id, quantity: 1 }, { location_id: theDefault, quantity: 1 }] }] });
    assert.equal(keep.statusCode, 200, 'fewer units kept at an inactive location are no new allocation');
    const more = await reallocate(created.id, { lines: [{ variant_id: variant.id, allocations: [{ location_id: store.id, quantity: 2 }] }] });
    assert.equal(problemOf(more).code, 'location_inactive');
    const away = await reallocate(created.id, { lines: [{ variant_id: variant.id, allocations: [{ location_id: theDefault, quantity: 2 }] }] });
    assert.equal(away.statusCode, 200);
    assert.deepEqual(await levels(variant.id), { [theDefault]: [5, 2], [store.id]: [5, 0] });
    const shown = (await asAdmin({ method: 'GET', url: `/api/variants/${variant.id}` })).json();
    assert.deepEqual([shown.stock, shown.reserved, shown.available], [10, 2, 3], 'the inactive store\'s 5 units count in stock, not in available');
    assert.equal((await variantRow(variant.id)).available_at_inactive_locations, 5);

    assert.equal((await asAdmin({ method: 'POST', url: `/api/reservations/${created.id}/release` })).statusCode, 200);
    const closed = await reallocate(created.id, { lines: [{ variant_id: variant.id, allocations: [{ location_id: theDefault, quantity: 2 }] }] });
    assert.equal(problemOf(closed).code, 'reservation_closed');
    assert.equal(closed.statusCode, 409);
  });

  it('honours Idempotency-Key: the same key and body replays the first answer; a manager or admin only', async () => {
    const variant = await createVariant();
    const theDefault = await defaultId();
    const store = await createLocation({ priority: 500 });
    await stockAt(variant.id, theDefault, 5);
    await stockAt(variant.id, store.id, 5);
    const created = (await reserve({ lines: [{ variant_id: variant.id, quantity: 2 }] })).json();
    const key = { 'idempotency-key': randomUUID() };
    const toStore = { lines: [{ variant_id: variant.id, allocations: [{ location_id: store.id, quantity: 2 }] }] };
    const first = await reallocate(created.id, toStore, key);
    assert.equal(first.statusCode, 200, first.body);
    // Moved back meanwhile, so a second run would write again; the replay writes nothing.
    assert.equal((await reallocate(created.id, { lines: [{ variant_id: variant.id, allocations: [{ location_id: theDefault, quantity: 2 }] }] })).statusCode, 200);
    const replay = await reallocate(created.id, toStore, key);
    assert.equal(replay.statusCode, 200);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.deepEqual(replay.json(), first.json());
    assert.deepEqual(await levels(variant.id), { [theDefault]: [5, 2], [store.id]: [5, 0] });
    const anonymous = await fixture.app.inject({ method: 'POST', url: `/api/reservations/${created.id}/reallocate`, payload: toStore });
    assert.equal(anonymous.statusCode, 401);
    const customer = await createUser(fixture.app);
    const refused = await fixture.app.inject({ method: 'POST', url: `/api/reservations/${created.id}/reallocate`, headers: customer.auth, payload: toStore });
    assert.equal(refused.statusCode, 403);
    const manager = await createUser(fixture.app, { role: 'manager', admin: fixture.admin });
    const byManager = await fixture.app.inject({ method: 'POST', url: `/api/reservations/${created.id}/reallocate`, headers: manager.auth, payload: toStore });
    assert.equal(byManager.statusCode, 200, byManager.body);
    assert.deepEqual(await levels(variant.id), { [theDefault]: [5, 0], [store.id]: [5, 2] });
  });
});

describe('a commit or release that waited for a reallocation (PostgreSQL)', { skip: !onPostgres && 'needs PostgreSQL' }, () => {
  const fixture = useTwoInstancesWithAdmin();
  const asAdmin = (request: InjectOptions) => fixture.first.app.inject({ ...request, headers: { ...fixture.admin.auth, ...request.headers } });
  const levels = async (variantId: string) =>
    Object.fromEntries(
      (await fixture.first.db.selectFrom('stock_levels').select(['location_id', 'stock', 'reserved']).where('variant_id', '=', variantId).execute()).map((level) => [level.location_id, [level.stock, level.reserved]]),
    );

  /**
   * Another transaction moves the reservation's first line from the default to the store, as a
   * reallocation writes it (the reservation's row locked first), and commits only once `action`
   * waits for that lock: the action must then act on the allocation the move left, not on the
   * one it read or saw in its statement's snapshot.
   */
  async function whileMoved(action: () => Promise<LightMyRequestResponse>, reservation: { id: string; variantId: string; quantity: number }, from: string, to: string) {
    let answer: Promise<LightMyRequestResponse> | undefined;
    await fixture.second.db.transaction().execute(async (other) => {
      await sql`update reservations set updated_at = now() where id = ${reservation.id}`.execute(other);
      await sql`select id from variants where id = ${reservation.variantId} for update`.execute(other);
      await sql`update stock_levels set reserved = reserved - ${reservation.quantity} where variant_id = ${reservation.variantId} and location_id = ${from}`.execute(other);
      await sql`update stock_levels set reserved = reserved + ${reservation.quantity} where variant_id = ${reservation.variantId} and location_id = ${to}`.execute(other);
      await sql`update reservation_allocations set location_id = ${to} where reservation_id = ${reservation.id} and position = 0`.execute(other);
      answer = action();
      for (;;) {
        const waiting = await sql<{ count: string }>`select count(*) from pg_stat_activity where wait_event_type = 'Lock' and query like '%reservations%'`.execute(fixture.first.db);
        if (Number(waiting.rows[0]!.count) > 0) break;
        await new Promise((resolve) => setImmediate(resolve));
      }
    });
    return answer!;
  }

  const setUp = async () => {
    const variant = (await asAdmin({ method: 'POST', url: '/api/variants', payload: newVariantBody(0, 'rw') })).json() as { id: string };
    const other = (await asAdmin({ method: 'POST', url: '/api/variants', payload: newVariantBody(5, 'rw') })).json() as { id: string };
    const theDefault = (await fixture.first.db.selectFrom('locations').select('id').where('is_default', '=', true).executeTakeFirstOrThrow()).id;
    const store = (await asAdmin({ method: 'POST', url: '/api/locations', payload: { code: uniqueCode('rw'), name: 'Store', priority: 500 } })).json() as { id: string };
    for (const location of [theDefault, store.id]) {
      assert.equal((await asAdmin({ method: 'PUT', url: `/api/variants/${variant.id}/stock`, payload: { stock: 5, location_id: location, reason: 'count' } })).statusCode, 200);
    }
    return { variant, other, theDefault, store };
  };

  it('commits a one-line reservation at the location a reallocation moved it to while the commit waited', { timeout: 60_000 }, async () => {
    const { variant, theDefault, store } = await setUp();
    const held = (await asAdmin({ method: 'POST', url: '/api/reservations', payload: { lines: [{ variant_id: variant.id, quantity: 2 }] } })).json();
    assert.deepEqual(held.lines[0].allocations, [{ location_id: theDefault, quantity: 2 }]);
    const committed = await whileMoved(() => asAdmin({ method: 'POST', url: `/api/reservations/${held.id}/commit` }), { id: held.id, variantId: variant.id, quantity: 2 }, theDefault, store.id);
    assert.equal(committed.statusCode, 200, committed.body);
    assert.deepEqual(committed.json().lines[0].allocations, [{ location_id: store.id, quantity: 2 }]);
    assert.deepEqual(await levels(variant.id), { [theDefault]: [5, 0], [store.id]: [3, 0] }, 'the units left the store, where they were held');
  });

  it('releases a reservation of several lines at the locations a reallocation moved them to while the release waited', { timeout: 60_000 }, async () => {
    const { variant, other, theDefault, store } = await setUp();
    const held = (await asAdmin({ method: 'POST', url: '/api/reservations', payload: { lines: [{ variant_id: variant.id, quantity: 2 }, { variant_id: other.id, quantity: 1 }] } })).json();
    const released = await whileMoved(() => asAdmin({ method: 'POST', url: `/api/reservations/${held.id}/release` }), { id: held.id, variantId: variant.id, quantity: 2 }, theDefault, store.id);
    assert.equal(released.statusCode, 200, released.body);
    assert.deepEqual(await levels(variant.id), { [theDefault]: [5, 0], [store.id]: [5, 0] }, 'nothing left reserved at either');
    assert.deepEqual(await levels(other.id), { [theDefault]: [5, 0] });
  });
});
