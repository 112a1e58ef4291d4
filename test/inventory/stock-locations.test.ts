import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { createUser, newVariantBody, problemOf, useAppWithAdmin } from '../helpers/test-app.js';

const MERGE_PATCH = { 'content-type': 'application/merge-patch+json' };
const uniqueCode = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

/** API.md section 21: stock per location, where a change applies, the sums and the deletion of a location holding stock. */
describe('stock per location', () => {
  const fixture = useAppWithAdmin();
  const asAdmin = (request: InjectOptions) => fixture.app.inject({ ...request, headers: { ...fixture.admin.auth, ...request.headers } });
  const createVariant = async (stock: number) => {
    const created = await asAdmin({ method: 'POST', url: '/api/variants', payload: newVariantBody(stock, 'loc') });
    assert.equal(created.statusCode, 201, created.body);
    return created.json() as { id: string; stock: number; version: number };
  };
  const createLocation = async (body: Record<string, unknown> = {}) => {
    const created = await asAdmin({ method: 'POST', url: '/api/locations', payload: { code: uniqueCode('wh'), name: 'Warehouse', ...body } });
    assert.equal(created.statusCode, 201, created.body);
    return created.json() as { id: string; code: string };
  };
  const defaultLocation = async () => (await fixture.db.selectFrom('locations').select(['id', 'code']).where('is_default', '=', true).executeTakeFirstOrThrow());
  const stockOf = async (variantId: string) => {
    const read = await asAdmin({ method: 'GET', url: `/api/variants/${variantId}/stock` });
    assert.equal(read.statusCode, 200, read.body);
    return read.json() as { variant_id: string; stock: number; reserved: number; available: number; locations: { location_id: string; code: string; status: string; stock: number; reserved: number; available: number }[] };
  };
  const at = (view: Awaited<ReturnType<typeof stockOf>>, locationId: string) => view.locations.find((location) => location.location_id === locationId)!;
  const putStock = (variantId: string, payload: Record<string, unknown>) => asAdmin({ method: 'PUT', url: `/api/variants/${variantId}/stock`, payload: { reason: 'count', ...payload } });
  /** The stock at each location as the sum of its movements there, and as the levels hold it. */
  const movementSumsAndLevels = async (variantId: string) => {
    const movements = await fixture.db.selectFrom('stock_movements').select(['location_id', 'delta']).where('variant_id', '=', variantId).execute();
    const sums: Record<string, number> = {};
    for (const movement of movements) sums[movement.location_id] = (sums[movement.location_id] ?? 0) + movement.delta;
    const levels = await fixture.db.selectFrom('stock_levels').select(['location_id', 'stock']).where('variant_id', '=', variantId).execute();
    return { sums: Object.fromEntries(Object.entries(sums).filter(([, sum]) => sum !== 0)), levels: Object.fromEntries(levels.filter((level) => level.stock !== 0).map((level) => [level.location_id, level.stock])) };
  };

  it('shows every location by priority then code, zeros included; available sums active locations only', async () => {
    const variant = await createVariant(6);
    const first = await createLocation({ priority: 1 });
    const closed = await createLocation({ priority: 2, status: 'inactive' });
    const theDefault = await defaultLocation();
    assert.equal((await putStock(variant.id, { stock: 4, location_id: first.id.toUpperCase() })).statusCode, 200);
    const counted = await putStock(variant.id, { delta: 3, location_id: closed.id, reason: 'found in the closed shop' });
    assert.equal(counted.statusCode, 200, 'an inactive location may be counted');
    assert.deepEqual([counted.json().stock, counted.json().reserved], [13, 0]);

    const view = await stockOf(variant.id.toUpperCase());
    const locations = await fixture.db.selectFrom('locations').selectAll().execute();
    const expectedOrder = [...locations].sort((a, b) => a.priority - b.priority || (a.code.toLowerCase() < b.code.toLowerCase() ? -1 : 1)).map((location) => location.id);
    assert.deepEqual(view.locations.map((location) => location.location_id), expectedOrder, 'every location, by priority then code');
    assert.equal(view.variant_id, variant.id);
    assert.deepEqual([view.stock, view.reserved, view.available], [13, 0, 10], 'the inactive location counts in stock, not in available');
    assert.deepEqual(at(view, first.id), { location_id: first.id, code: first.code, status: 'active', stock: 4, reserved: 0, available: 4 });
    assert.deepEqual(at(view, closed.id), { location_id: closed.id, code: closed.code, status: 'inactive', stock: 3, reserved: 0, available: 3 });
    assert.deepEqual(at(view, theDefault.id), { location_id: theDefault.id, code: 'default', status: 'active', stock: 6, reserved: 0, available: 6 });
    assert.ok(view.locations.filter((location) => ![first.id, closed.id, theDefault.id].includes(location.location_id)).every((location) => location.stock === 0));

    const variantRow = await fixture.db.selectFrom('variants').selectAll().where('id', '=', variant.id).executeTakeFirstOrThrow();
    assert.deepEqual([variantRow.stock, variantRow.reserved], [13, 0], "the variant's kept sums");
    const { sums, levels } = await movementSumsAndLevels(variant.id);
    assert.deepEqual(sums, levels);

    assert.equal(problemOf(await asAdmin({ method: 'GET', url: `/api/variants/${randomUUID()}/stock` })).code, 'not_found');
    const customer = await createUser(fixture.app);
    assert.equal((await fixture.app.inject({ method: 'GET', url: `/api/variants/${variant.id}/stock`, headers: customer.auth })).statusCode, 403);
  });

  it('moves stock at a location: its movement and event carry the location and the stock there; its reserved and unknown ids are refused', async () => {
    const variant = await createVariant(5);
    const store = await createLocation();
    const moved = await putStock(variant.id, { delta: 2, location_id: store.id, reference: 'PO-7' });
    assert.equal(moved.statusCode, 200, moved.body);
    assert.equal(moved.json().stock, 7);
    const page = (await asAdmin({ method: 'GET', url: `/api/variants/${variant.id}/stock/movements` })).json();
    assert.deepEqual([page.items[0].location_id, page.items[0].delta, page.items[0].stock_after], [store.id, 2, 2], 'stock_after is the stock at that location');
    assert.equal(page.items[1].location_id, (await defaultLocation()).id);
    const event = await fixture.db.selectFrom('events').selectAll().where('subject_id', '=', variant.id).where('type', '=', 'variant.stock_changed').executeTakeFirstOrThrow();
    assert.deepEqual(event.data, { before: { stock: 5 }, after: { stock: 7 }, delta: 2, stock_after: 2, location_id: store.id, reason: 'count', reference: 'PO-7' });

    const unknown = await putStock(variant.id, { delta: 1, location_id: randomUUID() });
    assert.equal(unknown.statusCode, 404);
    assert.deepEqual(problemOf(unknown).errors?.map((error) => error.path), ['/location_id']);
    const below = await putStock(variant.id, { delta: -3, location_id: store.id });
    assert.equal(problemOf(below).code, 'insufficient_stock', 'the store holds 2: a location cannot go below zero though the variant has 7');
    assert.equal((await putStock(variant.id, { stock: 1_000_000_000, location_id: store.id })).statusCode, 400, 'the total stays within 1e9');
    assert.equal((await stockOf(variant.id)).stock, 7);
  });

  it('adjusts pairs of variant and location, all or nothing, with the paths of unknown locations, repeats and short lines', async () => {
    const [one, two] = [await createVariant(4), await createVariant(0)];
    const store = await createLocation();
    const theDefault = await defaultLocation();
    const adjust = (lines: Record<string, unknown>[]) => asAdmin({ method: 'POST', url: '/api/stock-adjustments', payload: { lines, reason: 'delivery' } });
    const done = await adjust([
      { variant_id: one.id, delta: 3, location_id: store.id },
      { variant_id: two.id, delta: 2 },
      { variant_id: one.id, delta: -1 },
    ]);
    assert.equal(done.statusCode, 200, done.body);
    assert.deepEqual(done.json().items.map((item: { id: string; stock: number }) => [item.id, item.stock]), [[one.id, 6], [two.id, 2], [one.id, 6]]);
    const view = await stockOf(one.id);
    assert.deepEqual([at(view, store.id).stock, at(view, theDefault.id).stock], [3, 3]);
    const { sums, levels } = await movementSumsAndLevels(one.id);
    assert.deepEqual(sums, levels);

    const repeated = await adjust([{ variant_id: one.id, delta: 1, location_id: theDefault.id }, { variant_id: one.id, delta: 1 }]);
    assert.equal(problemOf(repeated).code, 'validation_failed', 'the default named twice, once by omission');
    assert.deepEqual(problemOf(repeated).errors?.map((error) => error.path), ['/lines/1']);
    const unknown = await adjust([{ variant_id: one.id, delta: 1 }, { variant_id: two.id, delta: 1, location_id: randomUUID() }]);
    assert.equal(unknown.statusCode, 404);
    assert.deepEqual(problemOf(unknown).errors?.map((error) => error.path), ['/lines/1/location_id']);
    const short = await adjust([{ variant_id: one.id, delta: 1 }, { variant_id: one.id, delta: -4, location_id: store.id }]);
    assert.equal(problemOf(short).code, 'insufficient_stock');
    assert.deepEqual(problemOf(short).errors?.map((error) => error.path), ['/lines/1']);
    assert.equal((await stockOf(one.id)).stock, 6, 'nothing changed');
  });

  it("sets stock through the variant at the one location holding it; at several, a change of the total is 409", async () => {
    const variant = await createVariant(0);
    const store = await createLocation();
    const theDefault = await defaultLocation();
    const url = `/api/variants/${variant.id}`;
    assert.equal((await putStock(variant.id, { stock: 5, location_id: store.id })).statusCode, 200);
    const patched = await asAdmin({ method: 'PATCH', url, headers: MERGE_PATCH, payload: { stock: 8 } });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.deepEqual([at(await stockOf(variant.id), store.id).stock, at(await stockOf(variant.id), theDefault.id).stock], [8, 0], 'the store holds all of it: the change applies there');

    assert.equal((await putStock(variant.id, { delta: 1 })).statusCode, 200);
    const several = await asAdmin({ method: 'PATCH', url, headers: MERGE_PATCH, payload: { stock: 5 } });
    assert.equal(problemOf(several).code, 'stock_at_several_locations');
    assert.equal(several.statusCode, 409);
    const sameTotal = await asAdmin({ method: 'PATCH', url, headers: MERGE_PATCH, payload: { stock: 9, name: 'Renamed' } });
    assert.equal(sameTotal.statusCode, 200, 'the same total is no change');
    const batch = await asAdmin({ method: 'POST', url: '/api/variants/batch', payload: { operations: [{ op: 'update', id: variant.id, variant: { ...newVariantBody(2, 'loc'), name: 'x' } }] } });
    assert.equal(problemOf(batch).code, 'stock_at_several_locations');
    assert.deepEqual(problemOf(batch).errors?.map((error) => error.path), ['/operations/0']);
    assert.deepEqual([(await stockOf(variant.id)).stock, at(await stockOf(variant.id), store.id).stock], [9, 8]);
  });

  it('refuses to delete a location holding stock or reserved units (409 location_not_empty), and deletes it once empty', async () => {
    const variant = await createVariant(0);
    const store = await createLocation({ priority: 0 });
    assert.equal((await putStock(variant.id, { stock: 3, location_id: store.id })).statusCode, 200);
    const reserved = await asAdmin({ method: 'POST', url: '/api/reservations', payload: { lines: [{ variant_id: variant.id, quantity: 2 }] } });
    assert.equal(reserved.statusCode, 201, reserved.body);
    const remove = () => asAdmin({ method: 'DELETE', url: `/api/locations/${store.id}` });
    assert.equal(problemOf(await remove()).code, 'location_not_empty');
    const level = await fixture.db.selectFrom('stock_levels').selectAll().where('variant_id', '=', variant.id).where('location_id', '=', store.id).executeTakeFirstOrThrow();
    assert.deepEqual([level.stock, level.reserved], [3, 2], 'the reservation holds its units at the only location with stock');
    assert.equal((await asAdmin({ method: 'POST', url: `/api/reservations/${reserved.json().id}/commit` })).statusCode, 200);
    assert.equal(problemOf(await remove()).code, 'location_not_empty', 'one unit is left');
    assert.equal((await putStock(variant.id, { stock: 0, location_id: store.id })).statusCode, 200);
    assert.equal((await remove()).statusCode, 204);
    assert.equal((await stockOf(variant.id)).locations.some((location) => location.location_id === store.id), false);
    const { sums, levels } = await movementSumsAndLevels(variant.id);
    assert.deepEqual([sums, levels], [{}, {}]);
  });

  it('reserves at the first active location, by priority, that has the whole line, and releases there', async () => {
    const variant = await createVariant(2);
    const theDefault = await defaultLocation();
    const early = await createLocation({ priority: 0, status: 'inactive' });
    const late = await createLocation({ priority: 500 });
    assert.equal((await putStock(variant.id, { stock: 9, location_id: early.id })).statusCode, 200);
    assert.equal((await putStock(variant.id, { stock: 5, location_id: late.id })).statusCode, 200);
    const reserve = (quantity: number) => asAdmin({ method: 'POST', url: '/api/reservations', payload: { lines: [{ variant_id: variant.id, quantity }] } });
    const small = await reserve(2);
    assert.equal(small.statusCode, 201);
    const large = await reserve(4);
    assert.equal(large.statusCode, 201, large.body);
    const view = await stockOf(variant.id);
    assert.deepEqual([at(view, early.id).reserved, at(view, theDefault.id).reserved, at(view, late.id).reserved], [0, 2, 4], 'never the inactive location; the default had 2');
    assert.equal(problemOf(await reserve(2)).code, 'insufficient_stock', 'one unit left at the late location, and the inactive one counts for nothing');
    assert.equal((await asAdmin({ method: 'POST', url: `/api/reservations/${large.json().id}/release` })).statusCode, 200);
    assert.equal(at(await stockOf(variant.id), late.id).reserved, 0);
    const variantRow = await fixture.db.selectFrom('variants').selectAll().where('id', '=', variant.id).executeTakeFirstOrThrow();
    assert.deepEqual([variantRow.stock, variantRow.reserved], [16, 2]);
  });

  it("imports a `stock` column at the one location holding the variant's stock; a row changing stock held at several fails alone", async () => {
    const [single, several] = [await createVariant(0), await createVariant(2)];
    const store = await createLocation();
    assert.equal((await putStock(single.id, { stock: 4, location_id: store.id })).statusCode, 200);
    assert.equal((await putStock(several.id, { stock: 1, location_id: store.id })).statusCode, 200);
    const skus = await fixture.db.selectFrom('variants').select(['id', 'sku']).where('id', 'in', [single.id, several.id]).execute();
    const skuOf = (id: string) => skus.find((row) => row.id === id)!.sku;
    const file = `sku,stock\n${skuOf(single.id)},9\n${skuOf(several.id)},5\n`;
    const upload = await asAdmin({ method: 'POST', url: '/api/variants/imports?on_error=skip_failed', headers: { 'content-type': 'text/csv' }, payload: file });
    assert.equal(upload.statusCode, 202, upload.body);
    await fixture.jobs.runNow('run-imports');
    const result = (await asAdmin({ method: 'GET', url: upload.headers.location as string })).json();
    assert.deepEqual([result.updated, result.failed], [1, 1], JSON.stringify(result));
    assert.match(result.first_errors[0].message, /stock_at_several_locations/);
    assert.deepEqual([at(await stockOf(single.id), store.id).stock, (await stockOf(single.id)).stock], [9, 9]);
    assert.equal((await stockOf(several.id)).stock, 3);
  });
});
