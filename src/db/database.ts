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
  kind: 'postgres' | 'pglite';
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
    kind: options.databaseUrl ? 'postgres' : 'pglite',
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}

function createPool(connectionString: string, max: number): pg.Pool {
  const pool = new pg.Pool({
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
