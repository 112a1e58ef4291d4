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
     select gen_random_uuid(), 'scale-product-' || (g / 20), 'SCALE-' || g, 'Scale variant ' || g, g % 100000, g % 50,
            jsonb_build_object('n', g::text), timestamptz '2026-01-01' + g * interval '1 second', timestamptz '2026-01-01'
     from generate_series($1::int, $2::int) g`,
    [from, to],
  );
  await client.query('analyze users');
  await client.query('analyze variants');
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
    const figuresAt = async (size: number): Promise<Figures[]> => {
      const cursor = await deepCursor(client, Math.floor(size * 0.9));
      const random = () => 1 + Math.floor(Math.random() * size);
      const scenarios = [
        { name: `SKU lookup (${size} rows)`, path: () => `/api/variants/sku/scale-${random()}`, headers },
        { name: `product page (${size} rows)`, path: () => `/api/variants/product/scale-product-${Math.floor(random() / 20)}`, headers },
        { name: `users page after ${Math.floor(size * 0.9)} rows`, path: () => `/api/users?limit=20&cursor=${cursor}`, headers },
        // Emails are md5-derived, as varied as real ones; the search is by a fragment of one.
        { name: `users search by email (${size} rows)`, path: () => `/api/users?limit=20&q=${md5(String(random())).slice(2, 10)}`, headers },
      ];
      const rows: Figures[] = [];
      for (const scenario of scenarios) rows.push(await measure(service.baseUrl, scenario, { connections: options.connections, duration: options.duration }));
      return rows;
    };

    await addRows(client, 1, 1000);
    const small = await figuresAt(1000);
    const started = Date.now();
    await addRows(client, 1001, 1_000_000);
    say(`Seeded 1,000,000 users and variants in ${((Date.now() - started) / 1000).toFixed(0)} s.`);
    say();
    const large = await figuresAt(1_000_000);
    say('### Cost against size (PostgreSQL)');
    say();
    say(formatTable([...small, ...large]));
    say();
    for (let index = 0; index < small.length; index++) {
      const ratio = small[index]!.requestsPerSecond / large[index]!.requestsPerSecond;
      say(`- ${large[index]!.name}: throughput at 1,000 rows is ${ratio.toFixed(2)}x that at 1,000,000 (target within 1.5x); p50 ${small[index]!.p50} ms vs ${large[index]!.p50} ms.`);
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
    say('EXPLAIN at 1,000,000 rows:');
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
