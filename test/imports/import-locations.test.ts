import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import { sql } from 'kysely';
import { transactionRetries } from '../../src/db/transaction.js';
import { onPostgres, useAppWithAdmin } from '../helpers/test-app.js';

const CSV = 'text/csv';
const JSONL = 'application/x-ndjson';

const unique = () => randomUUID().slice(0, 8).toUpperCase();

/** API.md section 21, "Imports and exports": stock per location in imports and exports. */
describe('variant imports and exports: stock at several locations', () => {
  const fixture = useAppWithAdmin();
  /** The second location, made once the one-location export is checked. */
  let store: { id: string; code: string };
  let defaultId: string;

  const post = async (url: string, payload: unknown) => {
    const reply = await fixture.app.inject({ method: 'POST', url, headers: fixture.admin.auth, payload: payload as object });
    assert.ok(reply.statusCode < 300, `${url}: ${reply.body}`);
    return reply.json();
  };
  const newVariant = (tag: string, sku: string, stock: number) => post('/api/variants', { product_id: `p-${tag}`, sku, name: sku, price: 100, stock, attributes: { sku } });
  const putStock = async (variantId: string, locationId: string, stock: number) => {
    const reply = await fixture.app.inject({ method: 'PUT', url: `/api/variants/${variantId}/stock`, headers: fixture.admin.auth, payload: { stock, location_id: locationId, reason: 'count' } });
    assert.equal(reply.statusCode, 200, reply.body);
  };
  /** A variant's stock at each location, by code, zeros included, as GET /api/variants/{id}/stock shows it. */
  const stockByCode = async (variantId: string) => {
    const reply = await fixture.app.inject({ method: 'GET', url: `/api/variants/${variantId}/stock`, headers: fixture.admin.auth });
    assert.equal(reply.statusCode, 200, reply.body);
    const body = reply.json() as { stock: number; locations: { code: string; stock: number }[] };
    return { total: body.stock, ...Object.fromEntries(body.locations.map((location) => [location.code, location.stock])) };
  };
  /** Uploads a file and runs the import queue until it has finished. */
  const imported = async (file: string, options: { type?: string; query?: string } = {}) => {
    const reply = await fixture.app.inject({
      method: 'POST',
      url: `/api/variants/imports${options.query ? `?${options.query}` : ''}`,
      headers: { ...fixture.admin.auth, 'content-type': options.type ?? CSV },
      payload: file,
    });
    assert.equal(reply.statusCode, 202, reply.body);
    await fixture.jobs.runNow('run-imports');
    return (await fixture.app.inject({ method: 'GET', url: reply.headers.location as string, headers: fixture.admin.auth })).json();
  };
  const exported = async (format: 'csv' | 'jsonl', productId: string) => {
    const reply = await fixture.app.inject({ method: 'GET', url: `/api/variants/export?format=${format}&product_id=${productId}`, headers: fixture.admin.auth });
    assert.equal(reply.statusCode, 200, reply.body);
    return reply.body;
  };

  before(async () => {
    const locations = (await fixture.app.inject({ method: 'GET', url: '/api/locations', headers: fixture.admin.auth })).json().items as { id: string; is_default: boolean }[];
    defaultId = locations.find((location) => location.is_default)!.id;
  });

  it('with one location, an export is as it always was: no stock.<code> column, no stock_by_location', async () => {
    const tag = unique();
    await newVariant(tag, `ONE-${tag}`, 3);
    assert.equal((await exported('csv', `p-${tag}`)).split('\n')[0], 'id,sku,product_id,name,price,stock,attributes.sku');
    const line = JSON.parse((await exported('jsonl', `p-${tag}`)).trim());
    assert.deepEqual(Object.keys(line), ['id', 'sku', 'product_id', 'name', 'price', 'stock', 'attributes']);
    assert.equal(line.stock, 3);
    store = await post('/api/locations', { code: 'Store-1', name: 'Store', priority: 200 });
  });

  it('CSV stock.<code> cells (codes in any case) create and update stock per location through inventory: levels, movements and events with location_id', async () => {
    const { db } = fixture;
    const tag = unique();
    const existing = await newVariant(tag, `OLD-${tag}`, 5);
    const same = await newVariant(tag, `SAME-${tag}`, 2);
    await putStock(same.id, store.id, 1);
    const file =
      'sku,product_id,name,price,stock,stock.DEFAULT,stock.store-1\n' +
      `NEW-${tag},p-${tag},New,10,,3,4\n` +
      `OLD-${tag},,,,,,2\n` +
      `SAME-${tag},,,,3,2,1\n`;
    const result = await imported(file);
    assert.equal(result.status, 'succeeded', JSON.stringify(result.first_errors));
    assert.deepEqual([result.created, result.updated, result.unchanged, result.failed], [1, 1, 1, 0]);

    const created = (await fixture.app.inject({ method: 'GET', url: `/api/variants/sku/NEW-${tag}`, headers: fixture.admin.auth })).json();
    assert.equal(created.stock, 7);
    assert.deepEqual(await stockByCode(created.id), { total: 7, default: 3, 'Store-1': 4 });
    assert.deepEqual(await stockByCode(existing.id), { total: 7, default: 5, 'Store-1': 2 }, 'a location the row leaves out keeps its stock');
    assert.deepEqual(await stockByCode(same.id), { total: 3, default: 2, 'Store-1': 1 });

    const movements = await db
      .selectFrom('stock_movements')
      .select(['variant_id', 'location_id', 'delta', 'stock_after'])
      .where('reason', '=', `import ${result.id}`)
      .execute();
    const inOrder = (list: object[]) => list.map((item) => JSON.stringify(item)).sort();
    assert.deepEqual(
      inOrder(movements.map((movement) => ({ variant_id: movement.variant_id, location_id: movement.location_id, delta: movement.delta, stock_after: movement.stock_after }))),
      inOrder([
        { variant_id: created.id, location_id: defaultId, delta: 3, stock_after: 3 },
        { variant_id: created.id, location_id: store.id, delta: 4, stock_after: 4 },
        { variant_id: existing.id, location_id: store.id, delta: 2, stock_after: 2 },
      ]),
    );
    const events = await db.selectFrom('events').select(['type', 'subject_id', 'data']).where('subject_id', 'in', [created.id, existing.id, same.id]).where('created_at', '>=', new Date(result.started_at)).execute();
    assert.deepEqual(events.map((event) => [event.type, event.subject_id]).sort(), [
      ['variant.created', created.id],
      ['variant.stock_changed', existing.id],
    ].sort());
    const changed = events.find((event) => event.type === 'variant.stock_changed')!.data as Record<string, unknown>;
    assert.deepEqual(
      { before: changed.before, after: changed.after, delta: changed.delta, stock_after: changed.stock_after, location_id: changed.location_id, import_id: changed.import_id },
      { before: { stock: 5 }, after: { stock: 7 }, delta: 2, stock_after: 2, location_id: store.id, import_id: result.id },
    );
    const versions = await db.selectFrom('variants').select(['id', 'version']).where('id', 'in', [existing.id, same.id]).execute();
    assert.deepEqual(versions.find((row) => row.id === existing.id)!.version, existing.version + 1, 'one version step for the row');
    assert.deepEqual(versions.find((row) => row.id === same.id)!.version, same.version + 1, 'the unchanged row wrote nothing (its PUT stock moved the version once)');
  });

  it('fails a row whose stock is not the total its stock.<code> cells leave, a level out of bounds (each location and the total) or below what is reserved there', async () => {
    const { db } = fixture;
    const tag = unique();
    const held = await newVariant(tag, `HELD-${tag}`, 5);
    await post('/api/reservations', { lines: [{ variant_id: held.id, quantity: 4, location_id: defaultId }] });
    const spread = await newVariant(tag, `SPREAD-${tag}`, 1);
    await putStock(spread.id, store.id, 1);
    const file =
      'sku,product_id,name,price,stock,stock.default,stock.Store-1\n' +
      `T1-${tag},p-${tag},T1,1,9,3,4\n` +
      `T2-${tag},p-${tag},T2,1,7,3,4\n` +
      `T3-${tag},p-${tag},T3,1,,-1,0\n` +
      `T4-${tag},p-${tag},T4,1,,1000000001,0\n` +
      `T5-${tag},p-${tag},T5,1,,600000000,600000000\n` +
      `HELD-${tag},,,,,3,\n` +
      `HELD-${tag},,,,6,,2\n` +
      `SPREAD-${tag},,,,5,,\n`;
    const result = await imported(file, { query: 'on_error=skip_failed' });
    assert.equal(result.status, 'succeeded');
    assert.deepEqual([result.created, result.updated, result.failed], [1, 0, 7], JSON.stringify(result.first_errors));
    assert.deepEqual(
      result.first_errors.map((error: { line: number; message: string }) => error.line),
      [2, 4, 5, 6, 7, 8, 9],
    );
    const messages = result.first_errors.map((error: { message: string }) => error.message);
    assert.match(messages[0], /^stock \(9\) is not the total the stock of each location gives \(7\)/);
    assert.equal(messages[1], 'stock.default must be at least 0');
    assert.equal(messages[2], 'stock.default must be at most 1000000000');
    assert.equal(messages[3], 'stock must be at most 1000000000', 'the total is bounded too');
    assert.match(messages[4], /^insufficient_stock: stock\.default would leave 3 units with 4 reserved \(5 on hand\) at location default/);
    assert.match(messages[5], /^stock \(6\) is not the total .* \(7\)/, 'the total counts the locations the row leaves as they are');
    // Refused by inventory as the batch writes, so the batch's rows were then written one by one (import-batch.ts).
    assert.match(messages[6], /^stock_at_several_locations: /, 'a stock cell alone cannot say which location moves');
    const report = await fixture.app.inject({ method: 'GET', url: `/api/variants/imports/${result.id}/errors`, headers: fixture.admin.auth });
    assert.equal(report.body.split('\n')[0], 'line,error,sku,product_id,name,price,stock,stock.Store-1,stock.default', 'the report keeps the stock.<code> columns, so a fixed report imports as it is');
    assert.deepEqual((parse(report.body, { columns: true }) as Record<string, string>[])[0], {
      line: '2',
      error: messages[0],
      sku: `T1-${tag}`,
      product_id: `p-${tag}`,
      name: 'T1',
      price: '1',
      stock: '9',
      'stock.Store-1': '4',
      'stock.default': '3',
    });
    assert.deepEqual(await stockByCode(held.id), { total: 5, default: 5, 'Store-1': 0 });
    assert.deepEqual(await stockByCode(spread.id), { total: 2, default: 1, 'Store-1': 1 });
    const taken = await db.selectFrom('variants').select('id').where('sku', '=', `T2-${tag}`).executeTakeFirstOrThrow();
    assert.deepEqual(await stockByCode(taken.id), { total: 7, default: 3, 'Store-1': 4 }, 'a stock equal to the total is taken');
  });

  it('fails the import at once when a CSV header names an unknown location code, or one location twice', async () => {
    const unknown = await imported('sku,stock.nowhere\nX-1,1\n');
    assert.equal(unknown.status, 'failed');
    assert.deepEqual(unknown.first_errors.map((error: { line: number }) => error.line), [1]);
    assert.match(unknown.first_errors[0].message, /^unknown column "stock\.nowhere"/);
    const twice = await imported('sku,stock.store-1,stock.STORE-1\nX-1,1,1\n');
    assert.equal(twice.status, 'failed');
    assert.match(twice.first_errors[0].message, /^the column "stock\.STORE-1" appears twice/);
  });

  it('JSON lines: stock_by_location sets each named location (any case; null is 0); an unknown code or one named twice fails its row', async () => {
    const { db } = fixture;
    const tag = unique();
    const existing = await newVariant(tag, `J-${tag}`, 6);
    await putStock(existing.id, store.id, 2);
    const lines = [
      JSON.stringify({ sku: `J-${tag}`, stock_by_location: { DEFAULT: null, 'store-1': 9 } }),
      JSON.stringify({ sku: `JN-${tag}`, product_id: `p-${tag}`, name: 'JN', price: 1, stock: 5, stock_by_location: { 'Store-1': 5 } }),
      JSON.stringify({ sku: `JU-${tag}`, product_id: `p-${tag}`, name: 'JU', price: 1, stock_by_location: { nowhere: 1 } }),
      JSON.stringify({ sku: `JT-${tag}`, product_id: `p-${tag}`, name: 'JT', price: 1, stock_by_location: { 'store-1': 1, 'STORE-1': 2 } }),
      JSON.stringify({ sku: `JA-${tag}`, product_id: `p-${tag}`, name: 'JA', price: 1, stock_by_location: [1] }),
      JSON.stringify({ sku: `JS-${tag}`, product_id: `p-${tag}`, name: 'JS', price: 1, stock_by_location: { default: '1' } }),
    ].join('\n');
    const result = await imported(lines, { type: JSONL, query: 'on_error=skip_failed' });
    assert.equal(result.status, 'succeeded');
    assert.deepEqual([result.created, result.updated, result.failed], [1, 1, 4], JSON.stringify(result.first_errors));
    assert.deepEqual(result.first_errors, [
      { line: 3, message: 'stock_by_location.nowhere names no location' },
      { line: 4, message: 'stock_by_location.STORE-1 names location Store-1 a second time' },
      { line: 5, message: 'stock_by_location must be an object of location codes and units' },
      { line: 6, message: 'stock_by_location.default must be a whole number' },
    ]);
    assert.deepEqual(await stockByCode(existing.id), { total: 9, default: 0, 'Store-1': 9 });
    const created = await db.selectFrom('variants').select('id').where('sku', '=', `JN-${tag}`).executeTakeFirstOrThrow();
    assert.deepEqual(await stockByCode(created.id), { total: 5, default: 0, 'Store-1': 5 });
    const events = await db.selectFrom('events').select(['type', 'data']).where('subject_id', '=', existing.id).where('type', '=', 'variant.stock_changed').where('created_at', '>=', new Date(result.started_at)).execute();
    assert.deepEqual(
      events.map((event) => (event.data as { location_id: string }).location_id).sort(),
      [defaultId, store.id].sort(),
      'one variant.stock_changed per location that moved',
    );
  });

  it('with several locations, CSV and JSON lines exports carry the total and every location (0 where none), and import back with every row unchanged', async () => {
    const tag = unique();
    const both = await newVariant(tag, `B-${tag}`, 4);
    await putStock(both.id, store.id, 3);
    await newVariant(tag, `D-${tag}`, 2);
    const none = await newVariant(tag, `Z-${tag}`, 0);
    const away = await newVariant(tag, `S-${tag}`, 0);
    await putStock(away.id, store.id, 8);
    const csv = await exported('csv', `p-${tag}`);
    assert.equal(csv.split('\n')[0], 'id,sku,product_id,name,price,stock,stock.default,stock.Store-1,attributes.sku');
    const rows = parse(csv, { columns: true }) as Record<string, string>[];
    assert.deepEqual(
      rows.map((row) => [row.sku, row.stock, row['stock.default'], row['stock.Store-1']]),
      [
        [`B-${tag}`, '7', '4', '3'],
        [`D-${tag}`, '2', '2', '0'],
        [`Z-${tag}`, '0', '0', '0'],
        [`S-${tag}`, '8', '0', '8'],
      ],
    );
    const jsonl = await exported('jsonl', `p-${tag}`);
    const lines = jsonl.trim().split('\n').map((line) => JSON.parse(line));
    assert.deepEqual(Object.keys(lines[0]), ['id', 'sku', 'product_id', 'name', 'price', 'stock', 'stock_by_location', 'attributes']);
    assert.deepEqual(
      lines.map((line) => [line.sku, line.stock, line.stock_by_location]),
      [
        [`B-${tag}`, 7, { default: 4, 'Store-1': 3 }],
        [`D-${tag}`, 2, { default: 2, 'Store-1': 0 }],
        [`Z-${tag}`, 0, { default: 0, 'Store-1': 0 }],
        [`S-${tag}`, 8, { default: 0, 'Store-1': 8 }],
      ],
    );
    for (const [file, type] of [
      [csv, CSV],
      [jsonl, JSONL],
    ] as const) {
      const result = await imported(file, { type });
      assert.equal(result.status, 'succeeded', JSON.stringify(result.first_errors));
      assert.deepEqual([result.rows_total, result.unchanged, result.created, result.updated, result.failed], [4, 4, 0, 0, 0], type);
    }
    assert.deepEqual(await stockByCode(none.id), { total: 0, default: 0, 'Store-1': 0 });
    assert.deepEqual(await stockByCode(both.id), { total: 7, default: 4, 'Store-1': 3 });
  });

  it('takes a location before the variants it sets stock of, as a change of the location status does, so the two never deadlock (PostgreSQL)', { skip: !onPostgres && 'needs PostgreSQL' }, async () => {
    const tag = unique();
    const variant = await newVariant(tag, `LOCK-${tag}`, 0);
    await putStock(variant.id, store.id, 1);
    const deadlocksBefore = transactionRetries.deadlock;
    let imports: Promise<unknown> | undefined;
    // A location's change of status locks the location, then its variants: this transaction does the same, and holds them while the import runs.
    await fixture.db.transaction().execute(async (trx) => {
      await trx.selectFrom('locations').select('id').where('id', '=', store.id).forUpdate().execute();
      imports = imported(`sku,product_id,name,price,stock.${store.code}\nLOCK-${tag},p-${tag},LOCK-${tag},100,7\n`);
      // The import waits for the location (taken first) rather than holding the variant this transaction is about to lock.
      for (let waits = 0; waits === 0; ) {
        waits = Number((await sql<{ count: string }>`select count(*) as count from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`.execute(fixture.db)).rows[0]!.count);
      }
      await sql`set local lock_timeout = '5s'`.execute(trx);
      await trx.selectFrom('variants').select('id').where('id', '=', variant.id).forUpdate().execute();
    });
    const outcome = (await imports) as { status: string; created: number; updated: number; failed: number };
    assert.equal(outcome.status, 'succeeded', JSON.stringify(outcome));
    assert.equal(outcome.updated, 1);
    assert.equal(((await stockByCode(variant.id)) as Record<string, number>)[store.code], 7);
    assert.equal(transactionRetries.deadlock, deadlocksBefore, 'no deadlock was met and retried');
  });
});
