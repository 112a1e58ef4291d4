import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { parse } from 'csv-parse/sync';
import pg from 'pg';
import { formatTable, measure } from './measure.js';
import { pick } from './setup.js';

const IMPORT_ROWS = 100_000;
const EXPORT_ROWS = 1_000_000;
const REFERENCE_BATCH = 1000;

/** A CSV of `rows` new variants of one product, as a shop's spreadsheet would give them. */
function catalogueCsv(tag: string, rows: number): string {
  const lines = ['sku,product_id,name,price,stock,attributes.n'];
  for (let index = 0; index < rows; index++) lines.push(`${tag}-${index},${tag},"Item ${index}, blue",${1000 + (index % 5000)},${index % 50},${index}`);
  return `${lines.join('\n')}\n`;
}

/**
 * The honest ceiling of an import's work: the same file parsed with csv-parse, and its rows
 * written with their creation events and opening movements by batched multi-row INSERTs over
 * one pooled connection, in one transaction, as the simplest correct code would.
 */
async function referenceImport(databaseUrl: string, csv: string, actorId: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const started = performance.now();
  try {
    const records = parse(csv, { columns: true }) as Record<string, string>[];
    await client.query('begin');
    for (let start = 0; start < records.length; start += REFERENCE_BATCH) {
      const batch = records.slice(start, start + REFERENCE_BATCH);
      const now = new Date();
      const ids = batch.map(() => randomUUID());
      await client.query(
        `insert into variants (id, product_id, sku, name, price, stock, attributes, created_at, updated_at)
         select * from unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::int[], $7::jsonb[], $8::timestamptz[], $8::timestamptz[])`,
        [ids, batch.map((row) => row.product_id), batch.map((row) => row.sku), batch.map((row) => row.name), batch.map((row) => Number(row.price)), batch.map((row) => Number(row.stock)), batch.map((row) => JSON.stringify({ n: row['attributes.n'] })), batch.map(() => now)],
      );
      const stocked = batch.map((row, index) => ({ id: ids[index]!, stock: Number(row.stock) })).filter((row) => row.stock > 0);
      await client.query(
        `insert into stock_movements (id, variant_id, location_id, delta, stock_after, reason, reference, actor_id, created_at)
         select gen_random_uuid(), variant_id, (select id from locations where is_default), stock, stock, 'reference import', null, $3, $4 from unnest($1::uuid[], $2::int[]) as opened (variant_id, stock)`,
        [stocked.map((row) => row.id), stocked.map((row) => row.stock), actorId, now],
      );
      // Since 0035 the stock is kept per location too, as the service's import writes it.
      await client.query(
        `insert into stock_levels (variant_id, location_id, stock)
         select variant_id, (select id from locations where is_default), stock from unnest($1::uuid[], $2::int[]) as opened (variant_id, stock)`,
        [stocked.map((row) => row.id), stocked.map((row) => row.stock)],
      );
      await client.query(
        `insert into events (id, type, created_at, actor_id, actor_type, request_id, subject_type, subject_id, data)
         select gen_random_uuid(), 'variant.created', $3, $4, 'user', null, 'variant', id, data from unnest($1::uuid[], $2::jsonb[]) as created (id, data)`,
        [ids, batch.map((row) => JSON.stringify({ after: { product_id: row.product_id, sku: row.sku, name: row.name, price: Number(row.price), attributes: { n: row['attributes.n'] }, stock: Number(row.stock) } })), now, actorId],
      );
    }
    await client.query('commit');
    return performance.now() - started;
  } finally {
    await client.end();
  }
}

async function upload(baseUrl: string, auth: Record<string, string>, csv: string): Promise<string> {
  const reply = await fetch(`${baseUrl}/api/variants/imports`, { method: 'POST', headers: { ...auth, 'content-type': 'text/csv' }, body: csv });
  if (reply.status !== 202) throw new Error(`the import upload failed: ${reply.status} ${await reply.text()}`);
  return ((await reply.json()) as { id: string }).id;
}

async function finished(baseUrl: string, auth: Record<string, string>, id: string): Promise<{ status: string; created: number }> {
  for (;;) {
    const state = (await (await fetch(`${baseUrl}/api/variants/imports/${id}`, { headers: auth })).json()) as { status: string; created: number };
    if (['succeeded', 'failed', 'cancelled'].includes(state.status)) return state;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function readRss(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

/**
 * Catalogue files on PostgreSQL (issue: imports and exports): 100,000 new variants imported
 * from CSV against the reference above (goal >= 0.5x its speed); the by-id read's p99 while an
 * import runs against its p99 without (goal <= 2x); 1,000,000 variants exported with the
 * service's RSS growth (goal < 50 MB).
 */
export async function runCatalogueBench(
  service: { baseUrl: string; pid: number },
  databaseUrl: string,
  data: { auth: Record<string, string>; variants: { id: string }[] },
  options: { connections: number; duration: number; say: (line?: string) => void; goal?: (what: string, figure: string, target: string, met: boolean) => void },
): Promise<void> {
  const { baseUrl } = service;
  const { auth } = data;
  const { say } = options;
  const goal = options.goal ?? (() => {});
  const adminId = String(((await (await fetch(`${baseUrl}/api/users/profile`, { headers: auth })).json()) as { id: string }).id);

  const referenceMs = await referenceImport(databaseUrl, catalogueCsv(`ref${randomUUID().slice(0, 6)}`, IMPORT_ROWS), adminId);
  const started = performance.now();
  const imported = await finished(baseUrl, auth, await upload(baseUrl, auth, catalogueCsv(`imp${randomUUID().slice(0, 6)}`, IMPORT_ROWS)));
  const serviceMs = performance.now() - started;
  if (imported.status !== 'succeeded' || imported.created !== IMPORT_ROWS) throw new Error(`the bench import did not create every row: ${JSON.stringify(imported)}`);
  say(`Import of ${IMPORT_ROWS.toLocaleString('en')} new variants from CSV (upload to finished, one transaction): the service ${(IMPORT_ROWS / (serviceMs / 1000)).toFixed(0)} rows/s (${(serviceMs / 1000).toFixed(1)} s); the reference (csv-parse and batched multi-row INSERTs of the rows, their events and movements, one transaction) ${(IMPORT_ROWS / (referenceMs / 1000)).toFixed(0)} rows/s (${(referenceMs / 1000).toFixed(1)} s); ratio ${(referenceMs / serviceMs).toFixed(2)}x (goal >= 0.5x).`);
  say();

  const byId = { name: 'GET /api/variants/{id}', path: () => `/api/variants/${pick(data.variants).id}`, headers: auth };
  const quiet = await measure(baseUrl, { ...byId, name: 'GET /api/variants/{id}, no import running' }, { connections: options.connections, duration: options.duration });
  const running = await upload(baseUrl, auth, catalogueCsv(`run${randomUUID().slice(0, 6)}`, IMPORT_ROWS));
  const during = await measure(baseUrl, { ...byId, name: 'GET /api/variants/{id}, an import running' }, { connections: options.connections, duration: options.duration });
  const runningState = await (await fetch(`${baseUrl}/api/variants/imports/${running}`, { headers: auth })).json();
  await finished(baseUrl, auth, running);
  say(formatTable([quiet, during]));
  say();
  goal('Import of 100,000 variants: service / reference, rows a second', `${(referenceMs / serviceMs).toFixed(2)}x`, '>= 0.5x', referenceMs / serviceMs >= 0.5);
  goal('By-id p99 while an import runs / without', `${(during.p99 / quiet.p99).toFixed(2)}x`, '<= 2x', during.p99 / quiet.p99 <= 2);
  say(`By-id p99 while an import runs / without: ${(during.p99 / quiet.p99).toFixed(2)}x (goal <= 2x); the import was ${(runningState as { status: string }).status} when the measurement ended.`);
  say();

  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(
      `insert into variants (id, product_id, sku, name, price, stock, attributes, created_at, updated_at)
       select gen_random_uuid(), 'export-' || (n % 1000), 'EXPORT-' || n, 'Export item ' || n, 1000 + n % 5000, n % 50, jsonb_build_object('n', n::text, 'size', 'M'),
              date_trunc('milliseconds', now()) - make_interval(secs => ${EXPORT_ROWS} - n), now()
       from generate_series(1, ${EXPORT_ROWS}) as n`,
    );
    await client.query('vacuum (analyze) variants');
  } finally {
    await client.end();
  }
  const before = await readRss(service.pid);
  let peak = before;
  const sampler = setInterval(() => void readRss(service.pid).then((rss) => (peak = Math.max(peak, rss))).catch(() => {}), 100);
  const exportStarted = performance.now();
  const exported = await fetch(`${baseUrl}/api/variants/export`, { headers: auth });
  let bytes = 0;
  let lines = 0;
  for await (const chunk of exported.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.byteLength;
    for (const byte of chunk) if (byte === 10) lines++;
  }
  clearInterval(sampler);
  const exportSeconds = (performance.now() - exportStarted) / 1000;
  goal('Export of every variant: service RSS growth', `${(peak - before).toFixed(0)} MB`, '< 50 MB', peak - before < 50);
  say(`Export of every variant (${(lines - 1).toLocaleString('en')} rows, ${(bytes / 1024 / 1024).toFixed(0)} MiB of CSV) in ${exportSeconds.toFixed(1)} s: service RSS ${before.toFixed(0)} MiB before, peak ${peak.toFixed(0)} MiB, growth ${(peak - before).toFixed(0)} MB (goal < 50 MB).`);
  say();
}
