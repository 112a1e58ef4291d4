import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { parse } from 'csv-parse/sync';
import type { JobRunner } from '../../src/jobs/job-runner.js';
import { problemOf, useAppWithAdmin, type Session } from '../helpers/test-app.js';

const CSV = 'text/csv';
const JSONL = 'application/x-ndjson';

/** Uploads a file and runs the import queue until it has finished. */
async function imported({ app, jobs }: { app: FastifyInstance; jobs: JobRunner }, session: Session, file: string, options: { type?: string; query?: string; headers?: Record<string, string> } = {}) {
  const reply = await app.inject({
    method: 'POST',
    url: `/api/variants/imports${options.query ? `?${options.query}` : ''}`,
    headers: { ...session.auth, 'content-type': options.type ?? CSV, ...options.headers },
    payload: file,
  });
  assert.equal(reply.statusCode, 202, reply.body);
  await jobs.runNow('run-imports');
  const done = await app.inject({ method: 'GET', url: reply.headers.location as string, headers: session.auth });
  return { reply, result: done.json() };
}

const unique = () => randomUUID().slice(0, 8).toUpperCase();

/** API.md section 14: variant imports and exports. */
describe('variant imports and exports', () => {
  const fixture = useAppWithAdmin();

  it('creates and updates by SKU from RFC 4180 CSV (BOM, quoted commas and newlines, attributes columns), with movements and events naming the import', async () => {
    const { app, jobs, db, admin } = fixture;
    const tag = unique();
    const existing = (await app.inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: { product_id: `p-${tag}`, sku: `OLD-${tag}`, name: 'Old', price: 100, stock: 1, attributes: { size: 'L' } } })).json();
    const same = (await app.inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: { product_id: `p-${tag}`, sku: `SAME-${tag}`, name: 'Same', price: 5, stock: 2 } })).json();
    const file =
      '\uFEFFsku,product_id,name,price,stock,attributes.size,attributes.colour\r\n' +
      `NEW-${tag},p-${tag},"Shirt, ""navy""\nsecond line",2999,7,M,navy\r\n` +
      `old-${tag.toLowerCase()},,Renamed,,3,,red\r\n` +
      `SAME-${tag},,,,,,\r\n`;
    const { reply, result } = await imported({ app, jobs }, admin, file);
    assert.match(String(reply.headers.location), /^\/api\/variants\/imports\/[0-9a-f-]{36}$/);
    assert.equal(reply.json().status, 'pending');
    assert.equal(result.status, 'succeeded');
    assert.deepEqual([result.rows_total, result.rows_processed, result.created, result.updated, result.unchanged, result.failed], [3, 3, 1, 1, 1, 0]);
    const created = (await app.inject({ method: 'GET', url: `/api/variants/sku/NEW-${tag}`, headers: admin.auth })).json();
    assert.equal(created.name, 'Shirt, "navy"\nsecond line');
    assert.deepEqual(created.attributes, { size: 'M', colour: 'navy' });
    assert.equal(created.stock, 7);
    const updated = (await app.inject({ method: 'GET', url: `/api/variants/${existing.id}`, headers: admin.auth })).json();
    assert.equal(updated.sku, `OLD-${tag}`, 'the stored case of the SKU stays');
    assert.equal(updated.name, 'Renamed');
    assert.equal(updated.price, 100, 'an empty cell keeps its field');
    assert.deepEqual(updated.attributes, { colour: 'red' }, 'an empty attributes.<key> cell removes the key');
    assert.equal(updated.stock, 3);
    const movements = await db.selectFrom('stock_movements').select(['variant_id', 'reason', 'delta']).where('reason', '=', `import ${result.id}`).orderBy('variant_id').execute();
    assert.deepEqual(movements.map((movement) => movement.variant_id).sort(), [created.id, existing.id].sort());
    const events = await db.selectFrom('events').selectAll().where('subject_id', 'in', [created.id, existing.id, same.id]).where('created_at', '>=', new Date(result.started_at)).execute();
    assert.deepEqual(events.map((event) => event.type).sort(), ['variant.created', 'variant.stock_changed', 'variant.updated']);
    assert.ok(events.every((event) => (event.data as { import_id?: string }).import_id === result.id), 'each names the import');
    const finished = await db.selectFrom('events').selectAll().where('subject_id', '=', result.id).execute();
    assert.deepEqual(finished.map((event) => [event.type, event.subject_type, event.actor_id]), [['import.finished', 'import', admin.id]]);
    assert.deepEqual(finished[0]!.data, { status: 'succeeded', rows_total: 3, created: 1, updated: 1, unchanged: 1, failed: 0 });
    assert.equal((await db.selectFrom('import_uploads').select('upload_id').execute()).length, 0, 'the upload is dropped once the import ends');
  });

  it('rejects all under reject_all: one bad row stores nothing; its error report is CSV with line and error, and fixed, it imports', async () => {
    const { app, jobs, db, admin } = fixture;
    const tag = unique();
    const file = `sku,product_id,name,price,attributes.size\nA-${tag},p-${tag},A,100,S\nB-${tag},p-${tag},B,ten,M\nC-${tag},p-${tag},,5,L\n`;
    const { result } = await imported({ app, jobs }, admin, file);
    assert.equal(result.status, 'failed');
    assert.deepEqual([result.created, result.updated, result.unchanged, result.failed], [0, 0, 0, 2]);
    assert.deepEqual(result.first_errors, [
      { line: 3, message: 'price must be a whole number' },
      { line: 4, message: 'name is required for a new variant' },
    ]);
    assert.equal((await db.selectFrom('variants').select('id').where('product_id', '=', `p-${tag}`).execute()).length, 0, 'nothing stored');
    const report = await app.inject({ method: 'GET', url: `/api/variants/imports/${result.id}/errors`, headers: admin.auth });
    assert.equal(report.statusCode, 200);
    assert.equal(report.headers['content-type'], 'text/csv; charset=utf-8');
    const rows = parse(report.body, { columns: true }) as Record<string, string>[];
    assert.deepEqual(rows.map((row) => [row.line, row.sku, row.price]), [['3', `B-${tag}`, 'ten'], ['4', `C-${tag}`, '5']]);
    const fixed = report.body.replace(',ten,', ',10,').replace(`,C-${tag},p-${tag},,5,`, `,C-${tag},p-${tag},C,5,`);
    const reupload = await imported({ app, jobs }, admin, fixed);
    assert.equal(reupload.result.status, 'succeeded', `the report itself, fixed, uploads as it is (line and error ignored): ${JSON.stringify(reupload.result.first_errors)}`);
    assert.equal(reupload.result.created, 2);
  });

  it('skips failed rows under skip_failed, reports them as JSON lines, and stores the rest; mode=create refuses known SKUs', async () => {
    const { app, jobs, admin } = fixture;
    const tag = unique();
    await app.inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: { product_id: `p-${tag}`, sku: `KNOWN-${tag}`, name: 'Known', price: 1 } });
    const lines = [
      JSON.stringify({ sku: `J1-${tag}`, product_id: `p-${tag}`, name: 'One', price: 10, stock: 2, attributes: { size: 'S' } }),
      '',
      '{not json',
      JSON.stringify({ sku: `J2-${tag}`, product_id: `p-${tag}`, name: 'Two', price: 10, attributes: { size: 'S' } }),
      JSON.stringify({ sku: `J3-${tag}`, product_id: `p-${tag}`, name: 'Three', price: 10, colour: 'red' }),
      JSON.stringify({ sku: `KNOWN-${tag}`, name: 'Renamed' }),
    ].join('\n');
    const { result } = await imported({ app, jobs }, admin, lines, { type: JSONL, query: 'on_error=skip_failed&mode=create' });
    assert.equal(result.status, 'succeeded');
    assert.equal(result.format, 'jsonl');
    assert.deepEqual([result.created, result.failed], [1, 4]);
    assert.deepEqual(result.first_errors.map((error: { line: number }) => error.line), [3, 4, 5, 6]);
    assert.match(result.first_errors[1].message, /^duplicate_attributes/);
    assert.match(result.first_errors[2].message, /unknown key "colour"/);
    assert.match(result.first_errors[3].message, /^sku_taken/);
    const report = await app.inject({ method: 'GET', url: `/api/variants/imports/${result.id}/errors`, headers: admin.auth });
    assert.equal(report.headers['content-type'], 'application/x-ndjson');
    const reported = report.body.trim().split('\n').map((line) => JSON.parse(line));
    assert.deepEqual(reported[0], { line: 3, error: 'the row is not valid JSON', text: '{not json' });
    assert.equal(reported[1].sku, `J2-${tag}`);
  });

  it('reports a dry run without storing anything; refuses stock below reserved; fails a file with a bad header at line 1', async () => {
    const { app, jobs, db, admin } = fixture;
    const tag = unique();
    const variant = (await app.inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: { product_id: `p-${tag}`, sku: `R-${tag}`, name: 'R', price: 1, stock: 5 } })).json();
    await app.inject({ method: 'POST', url: '/api/reservations', headers: admin.auth, payload: { lines: [{ variant_id: variant.id, quantity: 4 }] } });
    const { result } = await imported({ app, jobs }, admin, `sku,product_id,name,price,stock,attributes.size\nR-${tag},,,,2,\nD-${tag},p-${tag},D,1,1,XL\n`, { query: 'dry_run=true&on_error=skip_failed' });
    assert.equal(result.status, 'succeeded');
    assert.equal(result.dry_run, true);
    assert.deepEqual([result.created, result.failed], [1, 1], JSON.stringify(result.first_errors));
    assert.match(result.first_errors[0].message, /^insufficient_stock/);
    assert.equal((await db.selectFrom('variants').select('id').where('sku', '=', `D-${tag}`).execute()).length, 0, 'a dry run stores nothing');
    assert.equal((await db.selectFrom('events').select('id').where('subject_id', '=', variant.id).where('type', '=', 'variant.stock_changed').execute()).length, 0);

    const header = await imported({ app, jobs }, admin, 'sku,price,colour\nX,1,red\n');
    assert.equal(header.result.status, 'failed');
    assert.equal(header.result.first_errors[0].line, 1);
    assert.match(header.result.first_errors[0].message, /unknown column "colour"/);
    const noSku = await imported({ app, jobs }, admin, 'name,price\nX,1\n');
    assert.match(noSku.result.first_errors[0].message, /no "sku" column/);
  });

  it('exports CSV and JSON lines that import back with every row unchanged', async () => {
    const { app, jobs, admin } = fixture;
    const tag = unique();
    for (const [index, size] of ['S', 'M', 'L'].entries()) {
      const attributes = index === 0 ? { size, fit: 'slim, "tall"' } : { size };
      await app.inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: { product_id: `rt-${tag}`, sku: `RT-${tag}-${size}`, name: `Round trip, ${size}`, price: 100 + index, stock: index, attributes } });
    }
    for (const format of ['csv', 'jsonl'] as const) {
      const exported = await app.inject({ method: 'GET', url: `/api/variants/export?format=${format}&product_id=rt-${tag}`, headers: admin.auth });
      assert.equal(exported.statusCode, 200);
      assert.equal(exported.headers['content-disposition'], `attachment; filename="variants.${format}"`);
      if (format === 'csv') assert.equal(exported.body.split('\n')[0], 'id,sku,product_id,name,price,stock,attributes.fit,attributes.size');
      const { result } = await imported({ app, jobs }, admin, exported.body, { type: format === 'csv' ? CSV : JSONL });
      assert.equal(result.status, 'succeeded', JSON.stringify(result.first_errors));
      assert.deepEqual([result.rows_total, result.unchanged, result.created, result.updated], [3, 3, 0, 0], format);
    }
  });

  it('cancels an import before it ends, keeping only the batches that committed (409 import_finished once it ended), replays an Idempotency-Key, and refuses other media types and files over IMPORT_MAX_BYTES', async () => {
    const { app, jobs, db, admin } = fixture;
    const tag = unique();
    const post = (payload: string, headers: Record<string, string> = {}, query = '') =>
      app.inject({ method: 'POST', url: `/api/variants/imports${query}`, headers: { ...admin.auth, 'content-type': CSV, ...headers }, payload });
    // The upload wakes the import's job at once, so the cancel meets it pending or running. Six
    // batches of 500, each a transaction of its own: between two, the cancel gets its turn (on the
    // embedded database's one connection too), and the next batch finds the import no longer its
    // own and undoes itself. A one-row file was once finished before the cancel came, on PostgreSQL.
    const rows = Array.from({ length: 3000 }, (_, index) => `K-${tag}-${index},p-${tag}-${index},K,1`);
    const started = await post(`sku,product_id,name,price\n${rows.join('\n')}\n`, {}, '?on_error=skip_failed');
    assert.equal(started.statusCode, 202, started.body);
    const cancelled = await app.inject({ method: 'POST', url: `${started.headers.location}/cancel`, headers: admin.auth });
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    assert.equal(cancelled.json().status, 'cancelled');
    await jobs.runNow('run-imports');
    const ended = (await app.inject({ method: 'GET', url: started.headers.location as string, headers: admin.auth })).json();
    assert.equal(ended.status, 'cancelled');
    const stored = await db.selectFrom('variants').select('sku').where('sku', 'like', `K-${tag}-%`).execute();
    assert.ok(stored.length < rows.length, `${stored.length} of ${rows.length} rows stored`);
    assert.equal(stored.length % 500, 0, 'whole batches only');
    assert.equal(ended.created, stored.length, 'the counts are those of the batches that committed');
    const again = await app.inject({ method: 'POST', url: `${started.headers.location}/cancel`, headers: admin.auth });
    assert.equal(problemOf(again).code, 'import_finished');

    const key = { 'idempotency-key': `import-${tag}` };
    const first = await post(`sku,product_id,name,price\nI-${tag},p-${tag},I,1\n`, key);
    const replay = await post(`sku,product_id,name,price\nI-${tag},p-${tag},I,1\n`, key);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.json().id, first.json().id);
    assert.equal(problemOf(await post(`sku,product_id,name,price\nI-${tag},p-${tag},Other,1\n`, key)).code, 'idempotency_key_reused');

    const json = await app.inject({ method: 'POST', url: '/api/variants/imports', headers: admin.auth, payload: { sku: 'X' } });
    assert.equal(problemOf(json).code, 'unsupported_media_type');
    const list = await app.inject({ method: 'GET', url: '/api/variants/imports?limit=2', headers: admin.auth });
    assert.equal(list.json().items.length, 2);
  });
});

describe('variant imports: IMPORT_MAX_BYTES', () => {
  const fixture = useAppWithAdmin({ environment: { IMPORT_MAX_BYTES: '2048' } });

  it('refuses a larger upload with 413 and keeps none of it', async () => {
    const { app, db, admin } = fixture;
    const rows = Array.from({ length: 200 }, (_, index) => `BIG-${index},p-big,Big,1`).join('\n');
    const reply = await app.inject({ method: 'POST', url: '/api/variants/imports', headers: { ...admin.auth, 'content-type': CSV }, payload: `sku,product_id,name,price\n${rows}\n` });
    assert.equal(reply.statusCode, 413);
    assert.equal(problemOf(reply).code, 'payload_too_large');
    assert.equal((await db.selectFrom('import_uploads').select('upload_id').execute()).length, 0);
    assert.equal((await db.selectFrom('variant_imports').select('id').execute()).length, 0);
  });
});
