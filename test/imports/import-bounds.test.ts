import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { parse } from 'csv-parse/sync';
import { sql } from 'kysely';
import type { JobRunner } from '../../src/jobs/job-runner.js';
import { buildTestApp, loginAdmin, onPostgres, problemOf, useAppWithAdmin, type Session, type TestApp } from '../helpers/test-app.js';

const CSV = 'text/csv';
const JSONL = 'application/x-ndjson';
const unique = () => randomUUID().slice(0, 8).toUpperCase();

/** Uploads a file and runs the import queue until it has finished. */
async function imported({ app, jobs }: { app: FastifyInstance; jobs: JobRunner }, session: Session, file: string, options: { type?: string; query?: string } = {}) {
  const reply = await app.inject({
    method: 'POST',
    url: `/api/variants/imports${options.query ? `?${options.query}` : ''}`,
    headers: { ...session.auth, 'content-type': options.type ?? CSV },
    payload: file,
  });
  assert.equal(reply.statusCode, 202, reply.body);
  await jobs.runNow('run-imports');
  return (await app.inject({ method: 'GET', url: reply.headers.location as string, headers: session.auth })).json();
}

const errorReport = (app: FastifyInstance, session: Session, id: string) => app.inject({ method: 'GET', url: `/api/variants/imports/${id}/errors`, headers: session.auth });

/** API.md section 17, "Imports are bounded" and "CSV cells that spreadsheets would run" (issue 51). */
describe('variant imports: bounds', () => {
  const fixture = useAppWithAdmin();

  it('fails a 7 MiB CSV whose header has 400,000 attributes.<key> columns at line 1, at once, the event loop free meanwhile', async (t) => {
    const { app, jobs, db, admin } = fixture;
    const header = ['sku', ...Array.from({ length: 400_000 }, (_, index) => `attributes.k${index}`)].join(',');
    // Short rows: each was made an object of 400,000 cells all the same.
    const file = Buffer.from(`${header}\nWIDE-1,x\nWIDE-2,y\n`);
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const reply = await app.inject({
      method: 'POST',
      url: '/api/variants/imports',
      headers: { ...admin.auth, 'content-type': CSV },
      // In 64 KiB chunks, as a socket brings it.
      payload: Readable.from(Array.from({ length: Math.ceil(file.length / 65_536) }, (_, index) => file.subarray(index * 65_536, (index + 1) * 65_536))),
    });
    assert.equal(reply.statusCode, 202, reply.body);
    await jobs.runNow('run-imports');
    delay.disable();
    const result = (await app.inject({ method: 'GET', url: reply.headers.location as string, headers: admin.auth })).json();
    t.diagnostic(`the longest the event loop was held, upload and run: ${Math.round(delay.max / 1e6)} ms`);
    assert.equal(result.status, 'failed');
    assert.deepEqual(result.first_errors, [{ line: 1, message: 'the header has 400001 columns: at most 200' }]);
    assert.ok(delay.max < 1e9, `the event loop was held ${Math.round(delay.max / 1e6)} ms at once`);
    const stored = await db.selectFrom('variant_imports').select(['attempts', 'last_error']).where('id', '=', result.id).executeTakeFirstOrThrow();
    assert.deepEqual(stored, { attempts: 1, last_error: null }, 'one run, which ended the import');
    assert.equal((await db.selectFrom('import_uploads').select('upload_id').execute()).length, 0, 'its upload is removed');
  });

  it('fails a row over 64 KiB alone under skip_failed: the others are stored, the report lists it by line', async () => {
    const { app, jobs, admin } = fixture;
    const tag = unique();
    const file = `sku,product_id,name,price\nB1-${tag},p1-${tag},One,1\nB2-${tag},p2-${tag},"${'n'.repeat(70 * 1024)}",2\nB3-${tag},p3-${tag},Three,3\n`;
    const result = await imported({ app, jobs }, admin, file, { query: 'on_error=skip_failed' });
    assert.equal(result.status, 'succeeded');
    assert.deepEqual([result.created, result.failed], [2, 1]);
    assert.deepEqual(result.first_errors, [{ line: 3, message: 'the row is over 64 KiB' }]);
    const report = parse((await errorReport(app, admin, result.id)).body, { columns: true }) as Record<string, string>[];
    assert.deepEqual(report, [{ line: '3', error: 'the row is over 64 KiB' }]);
  });

  it('fails a row with a NUL character, a lone surrogate or a value nested too deep alone, in words of section 1; no database message anywhere', async () => {
    const { app, jobs, db, admin } = fixture;
    const tag = unique();
    const csv = `sku,product_id,name,price,attributes.size\nN1-${tag},p-${tag},"a\u0000b",1,S\nN2-${tag},p-${tag},Fine,1,M\nN3-${tag},p-${tag},Fine,1,"L\u0000"\n`;
    const fromCsv = await imported({ app, jobs }, admin, csv, { query: 'on_error=skip_failed' });
    assert.equal(fromCsv.status, 'succeeded', JSON.stringify(fromCsv.first_errors));
    assert.deepEqual([fromCsv.created, fromCsv.failed], [1, 2]);
    assert.deepEqual(fromCsv.first_errors, [
      { line: 2, message: 'name must not contain a NUL character' },
      { line: 4, message: 'attributes.size must not contain a NUL character' },
    ]);
    const csvReport = parse((await errorReport(app, admin, fromCsv.id)).body, { columns: true }) as Record<string, string>[];
    assert.deepEqual(csvReport.map((row) => [row.line, row.name]), [['2', 'a\uFFFDb'], ['4', 'Fine']], 'a NUL is written as U+FFFD');

    const lines = [
      `{"sku":"J1-${tag}","product_id":"p-${tag}","name":"a\\u0000b","price":1}`,
      `{"sku":"J2-${tag}","product_id":"p-${tag}","name":"lone \\ud800","price":1}`,
      `{"sku":"J3-${tag}","product_id":"p-${tag}","name":"Fine","price":1,"attributes":{"si\\u0000ze":"S"}}`,
      `{"sku":"J4-${tag}","product_id":"j-${tag}","name":"Fine","price":1,"attributes":{"size":"M"}}`,
      `{"sku":"J5-${tag}","\\u0000":"x"}`,
      `${'['.repeat(20_000)}${']'.repeat(20_000)}`,
    ].join('\n');
    const fromJson = await imported({ app, jobs }, admin, lines, { type: JSONL, query: 'on_error=skip_failed' });
    assert.equal(fromJson.status, 'succeeded', JSON.stringify(fromJson.first_errors));
    assert.deepEqual([fromJson.created, fromJson.failed], [1, 5]);
    assert.deepEqual(fromJson.first_errors, [
      { line: 1, message: 'name must not contain a NUL character' },
      { line: 2, message: 'name must be valid Unicode text (it has a lone surrogate)' },
      { line: 3, message: 'a key of attributes must not contain a NUL character' },
      { line: 5, message: 'a key of the row must not contain a NUL character' },
      { line: 6, message: 'the row nests arrays or objects more than 16 deep' },
    ]);
    const jsonReport = (await errorReport(app, admin, fromJson.id)).body.trim().split('\n').map((line) => JSON.parse(line));
    assert.deepEqual(jsonReport.slice(0, 2).map((row) => row.name), ['a\uFFFDb', 'lone \uFFFD']);

    const rejected = await imported({ app, jobs }, admin, `sku,product_id,name,price\nR1-${tag},p-${tag},"x\u0000",1\n`);
    assert.equal(rejected.status, 'failed');
    assert.deepEqual(rejected.first_errors, [{ line: 2, message: 'name must not contain a NUL character' }]);
    const runs = await db.selectFrom('variant_imports').select(['attempts', 'last_error']).where('id', 'in', [fromCsv.id, fromJson.id, rejected.id]).execute();
    assert.deepEqual(runs, [0, 1, 2].map(() => ({ attempts: 1, last_error: null })), 'each import ended in its first run');
  });

  it('ends an import whose runs keep failing with a message of its own: the database\'s stays out of first_errors', async () => {
    const { app, jobs, db, admin } = fixture;
    const tag = unique();
    // A real failure of the database on every run: a trigger that refuses the import's variants.
    await sql`create function refuse_import_rows() returns trigger language plpgsql as $$ begin raise exception 'internal database detail %', new.sku; end $$`.execute(db);
    await sql`create trigger refuse_import_rows before insert on variants for each row when (new.product_id = ${sql.lit(`t-${tag}`)}) execute function refuse_import_rows()`.execute(db);
    try {
      const reply = await app.inject({ method: 'POST', url: '/api/variants/imports', headers: { ...admin.auth, 'content-type': CSV }, payload: `sku,product_id,name,price\nT-${tag},t-${tag},T,1\n` });
      const id = reply.json().id as string;
      for (let run = 1; run <= 5; run++) {
        await jobs.runNow('run-imports');
        // The pause before the next run, ended by moving the row, not by waiting.
        await db.updateTable('variant_imports').set({ next_attempt_at: new Date() }).where('id', '=', id).where('status', '=', 'pending').execute();
      }
      const ended = (await app.inject({ method: 'GET', url: `/api/variants/imports/${id}`, headers: admin.auth })).json();
      assert.equal(ended.status, 'failed');
      assert.deepEqual(ended.first_errors, [{ line: 0, message: 'the import could not be completed: its runs failed 5 times' }]);
      const stored = await db.selectFrom('variant_imports').select('last_error').where('id', '=', id).executeTakeFirstOrThrow();
      assert.match(String(stored.last_error), /internal database detail/, 'operators still have the cause');
    } finally {
      await sql`drop trigger refuse_import_rows on variants`.execute(db);
      await sql`drop function refuse_import_rows()`.execute(db);
    }
  });

  it('writes a cell a spreadsheet would run with a leading quote, in CSV exports and error reports; an import takes it off, so an export imports back unchanged', async () => {
    const { app, jobs, db, admin } = fixture;
    const tag = unique();
    const names = ['=SUM(A1)', '+1 shirt', '-sale-', '@home', "'=already quoted", 'plain'];
    for (const [index, name] of names.entries()) {
      const attributes = { n: String(index), note: ['\ttab', '-5', '\rreturn', 'fine', "''+two", '@'][index]! };
      const created = await app.inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: { product_id: `f-${tag}`, sku: `F${index}-${tag}`, name, price: 1, stock: 0, attributes } });
      assert.equal(created.statusCode, 201, created.body);
    }
    const exported = await app.inject({ method: 'GET', url: `/api/variants/export?product_id=f-${tag}`, headers: admin.auth });
    const rows = parse(exported.body, { columns: true }) as Record<string, string>[];
    assert.deepEqual(
      rows.map((row) => [row.name, row['attributes.note']]),
      [["'=SUM(A1)", "'\ttab"], ["'+1 shirt", "'-5"], ["'-sale-", "'\rreturn"], ["'@home", 'fine'], ["''=already quoted", "'''+two"], ['plain', "'@"]],
    );
    const jsonl = await app.inject({ method: 'GET', url: `/api/variants/export?format=jsonl&product_id=f-${tag}`, headers: admin.auth });
    assert.equal(JSON.parse(jsonl.body.split('\n')[0]!).name, '=SUM(A1)', 'JSON lines are not escaped');

    const back = await imported({ app, jobs }, admin, exported.body);
    assert.equal(back.status, 'succeeded', JSON.stringify(back.first_errors));
    assert.deepEqual([back.rows_total, back.unchanged, back.updated, back.created], [6, 6, 0, 0]);

    const refused = await imported({ app, jobs }, admin, `sku,product_id,name,price\nG-${tag},g-${tag},=cmd|' /C calc'!A0,ten\n`);
    const report = (await errorReport(app, admin, refused.id)).body;
    assert.deepEqual((parse(report, { columns: true }) as Record<string, string>[]).map((row) => row.name), ["'=cmd|' /C calc'!A0"]);
    const fixed = await imported({ app, jobs }, admin, report.replace(',ten', ',10'));
    assert.equal(fixed.created, 1, JSON.stringify(fixed.first_errors));
    const stored = await db.selectFrom('variants').select('name').where('sku', '=', `G-${tag}`).executeTakeFirstOrThrow();
    assert.equal(stored.name, "=cmd|' /C calc'!A0", 'the fixed report stores the cell as the file meant it');
  });

  it('keeps the first 10,000 failed rows of an import for its report and counts them all, all or nothing or not', async () => {
    const { app, jobs, db, admin } = fixture;
    const tag = unique();
    const rows = Array.from({ length: 10_050 }, (_, index) => `M${index}-${tag},p-${tag},Name ${index},not a price`);
    const file = `sku,product_id,name,price\n${rows.join('\n')}\n`;
    for (const query of ['on_error=reject_all', 'on_error=skip_failed']) {
      const result = await imported({ app, jobs }, admin, file, { query });
      assert.deepEqual([result.status, result.rows_total, result.failed, result.first_errors.length], [query.endsWith('reject_all') ? 'failed' : 'succeeded', 10_050, 10_050, 10], query);
      const kept = await db.selectFrom('variant_import_errors').select([sql<number>`count(*)::int`.as('count'), sql<number>`max(line)`.as('last')]).where('import_id', '=', result.id).executeTakeFirstOrThrow();
      assert.deepEqual(kept, { count: 10_000, last: 10_001 }, `${query}: the first 10,000, lines 2 to 10,001`);
      const report = parse((await errorReport(app, admin, result.id)).body, { columns: true }) as Record<string, string>[];
      assert.equal(report.length, 10_000);
      assert.deepEqual(report[9_999], { line: '10001', error: 'price must be a whole number', sku: `M9999-${tag}`, product_id: `p-${tag}`, name: 'Name 9999', price: 'not a price' });
    }
  });

  it('removes finished imports and their failed rows IMPORT_RETENTION_DAYS (30) after they finish', async () => {
    const { app, jobs, db, admin } = fixture;
    const tag = unique();
    const old = await imported({ app, jobs }, admin, `sku,price\nO-${tag},x\n`);
    const recent = await imported({ app, jobs }, admin, `sku,price\nQ-${tag},x\n`);
    const daysAgo = (days: number) => new Date(Date.now() - days * 24 * 60 * 60 * 1000);
    await db.updateTable('variant_imports').set({ finished_at: daysAgo(30.1) }).where('id', '=', old.id).execute();
    await db.updateTable('variant_imports').set({ finished_at: daysAgo(29.9) }).where('id', '=', recent.id).execute();
    await jobs.runNow('purge-finished-imports');
    const left = await db.selectFrom('variant_imports').select('id').where('id', 'in', [old.id, recent.id]).execute();
    assert.deepEqual(left.map((row) => row.id), [recent.id]);
    const errors = await db.selectFrom('variant_import_errors').select('import_id').where('import_id', 'in', [old.id, recent.id]).execute();
    assert.deepEqual(errors.map((row) => row.import_id), [recent.id], 'the failed rows go with their import');
    assert.equal((await app.inject({ method: 'GET', url: `/api/variants/imports/${old.id}`, headers: admin.auth })).statusCode, 404);
  });
});

const upload = (app: FastifyInstance, session: Session, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url: '/api/variants/imports', headers: { ...session.auth, 'content-type': CSV, ...headers }, payload: `sku,product_id,name,price\nA-${unique()},p-a,A,1\n` });

describe('variant imports: IMPORT_MAX_ACTIVE', () => {
  const fixture = useAppWithAdmin({ environment: { IMPORT_MAX_ACTIVE: '2' } });
  // No import runs: the imports accepted stay pending, and hold their places.
  before(() => fixture.jobs.stop());

  it('refuses another upload with 429 rate_limited and Retry-After, keeping none of it; a cancelled import frees its place and its upload', async () => {
    const { app, db, admin } = fixture;
    const first = await upload(app, admin);
    const second = await upload(app, admin);
    assert.deepEqual([first.statusCode, second.statusCode], [202, 202]);
    const refused = await upload(app, admin);
    assert.equal(refused.statusCode, 429);
    assert.equal(problemOf(refused).code, 'rate_limited');
    assert.equal(refused.headers['retry-after'], '30');
    const key = { 'idempotency-key': `busy-${unique()}` };
    assert.equal((await upload(app, admin, key)).statusCode, 429, 'refused under the lock too, the file read');
    assert.equal((await db.selectFrom('variant_imports').select('id').execute()).length, 2);
    const uploads = await db.selectFrom('import_uploads').select('upload_id').distinct().execute();
    assert.equal(uploads.length, 2, 'a refused upload leaves no file');

    const cancelled = await app.inject({ method: 'POST', url: `${first.headers.location}/cancel`, headers: admin.auth });
    assert.equal(cancelled.json().status, 'cancelled');
    const left = await db.selectFrom('import_uploads').select('upload_id').distinct().execute();
    assert.equal(left.length, 1, "the cancelled import's file is removed");
    const retried = await upload(app, admin, key);
    assert.equal(retried.statusCode, 202, 'the key a 429 refused is free to be sent again');
    assert.equal((await upload(app, admin)).statusCode, 429);
  });
});

describe('variant imports: IMPORT_MAX_ACTIVE across two instances (PostgreSQL)', { skip: !onPostgres && 'two instances need PostgreSQL' }, () => {
  const environment = { IMPORT_MAX_ACTIVE: '3' };
  const both = {} as { first: TestApp; second: TestApp; admin: Session };
  before(async () => {
    both.first = await buildTestApp({ environment });
    both.second = await buildTestApp({ environment, databaseUrl: both.first.databaseUrl! });
    both.admin = await loginAdmin(both.first.app);
    // No import runs: the imports accepted stay pending, and hold their places.
    await Promise.all([both.first.jobs.stop(), both.second.jobs.stop()]);
  });
  after(async () => {
    await both.second?.app.close();
    await both.first?.close();
  });

  it('admits exactly IMPORT_MAX_ACTIVE of sixteen uploads sent at once to both', async () => {
    const { first, second, admin } = both;
    const replies = await Promise.all(Array.from({ length: 16 }, (_, index) => upload((index % 2 === 0 ? first : second).app, admin)));
    const statuses = replies.map((reply) => reply.statusCode);
    assert.equal(statuses.filter((status) => status === 202).length, 3, statuses.join(' '));
    assert.equal(statuses.filter((status) => status === 429).length, 13, statuses.join(' '));
    const active = await first.db.selectFrom('variant_imports').select('upload_id').where('status', 'in', ['pending', 'running']).execute();
    assert.equal(active.length, 3);
    const uploads = await first.db.selectFrom('import_uploads').select('upload_id').distinct().execute();
    assert.deepEqual(uploads.map((row) => row.upload_id).sort(), active.map((row) => row.upload_id).sort(), 'only the admitted files are kept');
  });
});
