import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import pg from 'pg';
import { encodeCursor } from '../src/http/pagination.js';
import { createScratchDatabase } from '../test/helpers/scratch-database.js';
import { postJson } from '../test/helpers/service-process.js';
import { formatTable, measure, type Figures } from './measure.js';

const md5 = (text: string) => createHash('md5').update(text).digest('hex');

interface ScaleOptions {
  connections: number;
  duration: number;
  say: (line?: string) => void;
  startService: (databaseUrl: string) => Promise<{ child: ChildProcess; baseUrl: string; exited: Promise<number | null> }>;
}

/** Adds users and variants numbered from `from` to `to` straight in SQL (the API would take hours). */
async function addRows(client: pg.Client, from: number, to: number): Promise<void> {
  await client.query(
    `insert into users (id, email, name, role, status, password_hash, created_at, updated_at)
     select gen_random_uuid(), 'u' || substr(md5(g::text), 1, 12) || '@example.com', 'Customer ' || substr(md5(g::text || 'n'), 1, 10), 'user', 'active', 'not-a-hash',
            timestamptz '2026-01-01' + g * interval '1 second', timestamptz '2026-01-01'
     from generate_series($1::int, $2::int) g`,
    [from, to],
  );
  await client.query(
    `insert into variants (id, product_id, sku, name, price, stock, attributes, created_at, updated_at)
     select gen_random_uuid(), 'scale-product-' || (g / 20), 'SCALE-' || g, 'Variant ' || substr(md5(g::text || 'v'), 1, 12), g % 100000, g % 50,
            jsonb_build_object('n', g::text), timestamptz '2026-01-01' + g * interval '1 second', timestamptz '2026-01-01'
     from generate_series($1::int, $2::int) g`,
    [from, to],
  );
  await client.query('vacuum analyze users');
  await client.query('vacuum analyze variants');
}

/** A UUID made from a number, the same in SQL (`md5(text)::uuid`) and here. */
const uuidOf = (text: string) => md5(text).replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');

/**
 * Adds events numbered `from` to `to` about 1,000,000 subjects (ten each at 10,000,000) and
 * stock movements of the first 1,000 variants, straight in SQL.
 */
async function addHistory(client: pg.Client, events: [number, number], movements: [number, number]): Promise<void> {
  await client.query(
    `insert into events (id, type, created_at, actor_id, request_id, subject_type, subject_id, data)
     select gen_random_uuid(), 'variant.updated', timestamptz '2026-01-01' + g * interval '1 second', null, null, 'variant',
            md5('subject-' || (g % 1000000))::uuid, '{"after":{"price":1}}'::jsonb
     from generate_series($1::int, $2::int) g`,
    events,
  );
  await client.query(
    `insert into stock_movements (id, variant_id, location_id, delta, stock_after, reason, reference, actor_id, created_at)
     select gen_random_uuid(), v.id, (select id from locations where is_default), 1, g, 'scale', null, null, timestamptz '2026-01-01' + g * interval '1 second'
     from generate_series($1::int, $2::int) g join variants v on lower(v.sku) = 'scale-' || (g % 1000 + 1)`,
    movements,
  );
  await client.query('vacuum analyze events');
  await client.query('vacuum analyze stock_movements');
  // The seeding's dirty pages are written now, not by a checkpoint in the middle of a measurement.
  await client.query('checkpoint');
}

async function deepCursor(client: pg.Client, offset: number): Promise<string> {
  const row = (
    await client.query('select created_at, id from users where deleted_at is null order by created_at desc, id desc offset $1 limit 1', [offset])
  ).rows[0];
  return encodeCursor(new Date(row.created_at), row.id);
}

export async function runScaleComparison(serverUrl: string, options: ScaleOptions): Promise<void> {
  const { say } = options;
  const scratch = await createScratchDatabase(serverUrl, 'scale');
  const service = await options.startService(scratch.url);
  const client = new pg.Client({ connectionString: scratch.url });
  await client.connect();
  try {
    const login = await postJson(`${service.baseUrl}/api/auth/login`, { email: 'bench-admin@example.com', password: 'bench-admin-password' });
    const headers = { authorization: `Bearer ${login.body?.access_token}` };
    let variantIds: string[] = [];
    const figuresAt = async (size: number, eventCount: number): Promise<Figures[]> => {
      const cursor = await deepCursor(client, Math.floor(size * 0.9));
      const random = () => 1 + Math.floor(Math.random() * size);
      const subjects = Math.min(eventCount, 1_000_000);
      const scenarios = [
        { name: `SKU lookup (${size} rows)`, path: () => `/api/variants/sku/scale-${random()}`, headers },
        { name: `product page (${size} rows)`, path: () => `/api/variants/product/scale-product-${Math.floor(random() / 20)}`, headers },
        { name: `users page after ${Math.floor(size * 0.9)} rows`, path: () => `/api/users?limit=20&cursor=${cursor}`, headers },
        // Emails are md5-derived, as varied as real ones; the search is by a fragment of one.
        { name: `users search by email (${size} rows)`, path: () => `/api/users?limit=20&q=${md5(String(random())).slice(2, 10)}`, headers },
        // Names are md5-derived too; the search is by a fragment of one.
        { name: `variants search ?q= (${size} rows)`, path: () => `/api/variants?limit=20&q=${md5(`${random()}v`).slice(2, 10)}`, headers },
        { name: `events of a subject (${eventCount} events)`, path: () => `/api/events?limit=20&subject_id=${uuidOf(`subject-${Math.floor(Math.random() * subjects)}`)}`, headers },
        { name: `movements of a variant (${size} movements)`, path: () => `/api/variants/${variantIds[Math.floor(Math.random() * variantIds.length)]}/stock/movements?limit=20`, headers },
      ];
      const rows: Figures[] = [];
      for (const scenario of scenarios) rows.push(await measure(service.baseUrl, scenario, { connections: options.connections, duration: options.duration }));
      return rows;
    };

    await addRows(client, 1, 1000);
    await addHistory(client, [1, 1000], [1, 1000]);
    // Variants with movements: the first 1,000 by number (one each at first, a thousand each at 1,000,000).
    variantIds = (await client.query(`select id from variants where lower(sku) in (${Array.from({ length: 20 }, (_, index) => `'scale-${index + 1}'`).join(',')})`)).rows.map((row) => row.id as string);
    const small = await figuresAt(1000, 1000);
    const started = Date.now();
    await addRows(client, 1001, 1_000_000);
    await addHistory(client, [1001, 10_000_000], [1001, 1_000_000]);
    say(`Seeded 1,000,000 users, variants and stock movements and 10,000,000 events in ${((Date.now() - started) / 1000).toFixed(0)} s.`);
    say();
    const large = await figuresAt(1_000_000, 10_000_000);
    say('### Cost against size (PostgreSQL)');
    say();
    say(formatTable([...small, ...large]));
    say();
    for (let index = 0; index < small.length; index++) {
      const ratio = small[index]!.requestsPerSecond / large[index]!.requestsPerSecond;
      say(`- ${large[index]!.name}: throughput at the small size is ${ratio.toFixed(2)}x that at the large one (target within 1.5x); p50 ${small[index]!.p50} ms vs ${large[index]!.p50} ms.`);
    }
    say();
    const cursorRow = (await client.query('select created_at, id from users order by created_at desc, id desc offset 900000 limit 1')).rows[0];
    const plans: [string, string, unknown[]][] = [
      ['SKU lookup', 'select * from variants where lower(sku) = $1', ['scale-500000']],
      ['product page', 'select * from variants where product_id = $1 order by created_at asc, id asc limit 21', ['scale-product-25000']],
      [
        'users search',
        `select * from users where deleted_at is null and (email ilike $1 or name ilike $1)
         order by created_at desc, id desc limit 21`,
        [`%${md5('456789').slice(2, 10)}%`],
      ],
      [
        'deep users page',
        `select * from users where deleted_at is null and (created_at, id) < ($1, $2)
         order by created_at desc, id desc limit 21`,
        [cursorRow.created_at, cursorRow.id],
      ],
    ];
    const movementVariant = variantIds[0]!;
    plans.push(
      ['variants search', `select * from variants where (sku ilike $1 or name ilike $1) order by created_at desc, id desc limit 21`, [`%${md5('123456v').slice(2, 10)}%`]],
      ['events of a subject', 'select * from events where subject_id = $1 order by created_at desc, id desc limit 21', [uuidOf('subject-123456')]],
      ['movements of a variant', 'select * from stock_movements where variant_id = $1 order by created_at desc, id desc limit 21', [movementVariant]],
    );
    say('EXPLAIN at 1,000,000 rows (10,000,000 events):');
    say();
    say('```');
    for (const [label, query, parameters] of plans) {
      const plan = await client.query(`explain analyze ${query}`, parameters);
      say(`-- ${label}`);
      for (const row of plan.rows) say(row['QUERY PLAN']);
    }
    say('```');
  } finally {
    await client.end();
    service.child.kill('SIGTERM');
    await service.exited;
    await scratch.drop();
  }
}
