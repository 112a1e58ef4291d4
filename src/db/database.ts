import { createHash } from 'node:crypto';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { PGliteDialect } from './pglite-dialect.js';
import type { Database } from './tables.js';

export interface DatabaseOptions {
  /** postgres://… to use a server; unset for the embedded PGlite database. */
  databaseUrl?: string | undefined;
  /** Where PGlite keeps its files; 'memory://' keeps nothing. */
  dataDir: string;
  poolSize?: number;
}

export interface DatabaseHandle {
  db: Kysely<Database>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

const INT8_OID = 20;

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  const db = options.databaseUrl
    ? new Kysely<Database>({ dialect: new PostgresDialect({ pool: createPool(options.databaseUrl, options.poolSize ?? 10) }) })
    : new Kysely<Database>({ dialect: new PGliteDialect(await createPGlite(options.dataDir)) });
  return {
    db,
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}

/**
 * Runs parameterised queries as named prepared statements, so PostgreSQL parses and plans
 * each distinct statement once per connection instead of on every request. Kysely emits a
 * fixed text per query shape, so the set of names stays small. Pattern searches (ILIKE) are
 * left unnamed: their best plan depends on the pattern (a trigram index for a rare one), and
 * a cached generic plan would scan the table for every search.
 */
class PreparingClient extends pg.Client {
  // pg's overloads cannot be restated in a subclass; the arguments pass through unchanged.
  override query(...args: any[]): any {
    const [text, values] = args;
    if (typeof text === 'string' && Array.isArray(values) && values.length > 0 && args.length === 2 && !/ ilike /i.test(text)) {
      return super.query({ name: statementName(text), text, values });
    }
    return (super.query as (...rest: any[]) => any)(...args);
  }
}

const statementNames = new Map<string, string>();
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (!name) {
    name = `k_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
    statementNames.set(text, name);
  }
  return name;
}

function createPool(connectionString: string, max: number): pg.Pool {
  const pool = new pg.Pool({
    Client: PreparingClient,
    connectionString,
    max,
    // Bounds the wait for a connection (pooled or new), so an outage answers 503 within seconds.
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30000,
    // Amounts are bigint columns bounded well below 2^53, so numbers are exact.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // A client whose server goes away emits 'error', idle (on the pool) or checked out (on the
  // client); unheard, either kills the process. The failed query itself still rejects, and
  // the pool drops the dead client on release.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

async function createPGlite(dataDir: string): Promise<PGlite> {
  const location = dataDir === 'memory://' ? undefined : path.join(dataDir, 'pglite');
  const pglite = location ? new PGlite(location) : new PGlite();
  await pglite.waitReady;
  return pglite;
}
