import { createHash } from 'node:crypto';
import { chmod, mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { ChangeFeed, CHANGES_CHANNEL } from './change-feed.js';
import { PGliteDialect } from './pglite-dialect.js';
import { TracedDialect } from './traced-dialect.js';
import type { Database } from './tables.js';

export interface DatabaseOptions {
  /** postgres://… to use a server; unset for the embedded PGlite database. */
  databaseUrl?: string | undefined;
  /** Where PGlite keeps its files; 'memory://' keeps nothing. */
  dataDir: string;
  poolSize?: number;
  /** PostgreSQL: the longest a statement may run (sent as statement_timeout, and enforced on the client too). */
  statementTimeoutMs?: number;
  /** Called with the text of every statement sent (tests count them; a developer may print them). */
  onStatement?: (sql: string) => void;
  /** Every statement a span (tracing on: src/tracing.ts). */
  traced?: boolean;
  /**
   * PGlite in memory only: start from this image of a data directory (`dumpDataDir`) instead of
   * an empty cluster. Tests start each database from one image of the migrated schema, which
   * takes a fifth of the time an empty cluster does.
   */
  image?: Blob;
}

export interface PoolStats {
  /** Connections open, in use or idle. */
  total: number;
  idle: number;
  /** Queries waiting for a connection. */
  waiting: number;
}

export interface DatabaseHandle {
  db: Kysely<Database>;
  ping(): Promise<void>;
  /** The connection pool now; the embedded database is one connection, never waited on here. */
  poolStats(): PoolStats;
  /**
   * Whether statements outside a transaction can run while it is open (a pool: PostgreSQL). The
   * embedded database is one connection: a transaction holds it until it ends.
   */
  concurrent: boolean;
  /** Changes committed by any instance, as triggers notify them (change-feed.ts). */
  changes: ChangeFeed;
  close(): Promise<void>;
}

const INT8_OID = 20;
const parseInt8 = (value: string) => Number(value);

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  const changes = new ChangeFeed();
  const pool = options.databaseUrl ? createPool(options.databaseUrl, options.poolSize ?? 10, options.statementTimeoutMs ?? 5000, changes) : undefined;
  const plain = pool ? new PostgresDialect({ pool }) : new PGliteDialect(await createPGlite(options.dataDir, options.image, changes));
  const dialect = options.traced ? new TracedDialect(plain) : plain;
  const onStatement = options.onStatement;
  const db = new Kysely<Database>({ dialect, ...(onStatement ? { log: (event) => onStatement(event.query.sql) } : {}) });
  return {
    db,
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    concurrent: pool !== undefined,
    changes,
    poolStats: () => (pool ? { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount } : { total: 1, idle: 0, waiting: 0 }),
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
    const name = typeof text === 'string' && Array.isArray(values) && values.length > 0 && args.length === 2 ? statementName(text) : undefined;
    const result = name ? this.named(name, text, values) : (super.query as (...rest: any[]) => any)(...args);
    if (!(result instanceof Promise)) return result;
    return result.catch((error: Error) => {
      // A statement the server never answered leaves this connection busy for good: cut it, so
      // the pool drops it on release and the next request gets a fresh one. pg offers no public
      // way to cut a busy connection; this is the one private field the service touches, and
      // package.json pins pg exactly for it.
      if (error.message === 'Query read timeout') (this as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
      throw error;
    });
  }

  /**
   * A named statement, as `query({ name, text, values })` sends it. pg copies a config object
   * property by property through its descriptors (a tenth of a by-id read's time in pg, in the
   * profile); a query made from the text alone is not copied, and its name is set before it is
   * sent, which is all pg reads it for.
   */
  private named(name: string, text: string, values: unknown[]): Promise<pg.QueryResult> {
    // pg's typings leave out the two fields a query carries.
    const query = new pg.Query(text, values) as pg.Query & { name: string; callback: (error: Error | null, result: pg.QueryResult) => void };
    query.name = name;
    return new Promise((resolve, reject) => {
      query.callback = (error, result) => (error ? reject(error) : resolve(result));
      super.query(query);
    });
  }
}

const statementNames = new Map<string, string | null>();
/** The prepared statement's name for a text; null for a pattern search, which is planned each time. */
function statementName(text: string): string | null {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = / ilike /i.test(text) ? null : `k_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
    statementNames.set(text, name);
  }
  return name;
}

function createPool(connectionString: string, max: number, statementTimeoutMs: number, changes: ChangeFeed): pg.Pool {
  const pool = new pg.Pool({
    Client: PreparingClient,
    connectionString,
    max,
    statement_timeout: statementTimeoutMs,
    // The server's own timeout cannot fire when the network drops packets; the client's can.
    query_timeout: statementTimeoutMs + 1000,
    // Finds connections whose peer vanished without a reset while they sit in the pool.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    // Bounds the wait for a connection (pooled or new), so an outage answers 503 within seconds.
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30000,
    // Amounts are bigint columns bounded well below 2^53, so numbers are exact.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID ? parseInt8 : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // A client whose server goes away emits 'error', idle (on the pool) or checked out (on the
  // client); unheard, either kills the process. The failed query itself still rejects, and
  // the pool drops the dead client on release.
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    client.on('error', () => {});
    listenForChanges(client, changes);
  });
  return pool;
}

/**
 * A new connection listens before it runs anything else: pg-pool announces it ('connect') before
 * handing it out, and a connection runs its statements in order. What was notified before it
 * listened is lost to it, so its start is a gap of the feed, reported once it listens (before the
 * result of any statement sent after LISTEN).
 */
function listenForChanges(client: pg.PoolClient, changes: ChangeFeed): void {
  client.on('notification', (message) => {
    if (message.channel === CHANGES_CHANNEL && message.payload) changes.deliver(message.payload);
  });
  client.query(`listen ${CHANGES_CHANNEL}`).then(
    () => changes.gap(),
    // A connection that does not listen must not serve: the known callers rely on every one
    // hearing the changes. Ended, the pool drops it, and the next one reports its own start.
    () => {
      changes.gap();
      client.end().catch(() => {});
    },
  );
}

/**
 * PGlite is one connection in this process: it listens once, and hands over a transaction's
 * notifications before the COMMIT that sends them resolves.
 */
async function createPGlite(dataDir: string, image: Blob | undefined, changes: ChangeFeed): Promise<PGlite> {
  const pglite = await openPGlite(dataDir, image);
  await pglite.listen(CHANGES_CHANNEL, (payload) => changes.deliver(payload));
  return pglite;
}

async function openPGlite(dataDir: string, image?: Blob): Promise<PGlite> {
  if (dataDir === 'memory://') {
    const pglite = new PGlite(image ? { loadDataDir: image } : {});
    await pglite.waitReady;
    return pglite;
  }
  // The files hold password hashes: owner only. The umask covers files PGlite creates later.
  process.umask(0o077);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const pglite = new PGlite(path.join(dataDir, 'pglite'));
  await pglite.waitReady;
  await restrictToOwner(dataDir);
  return pglite;
}

/** Files 0600 and folders 0700, also for a data directory an older version left readable. */
async function restrictToOwner(directory: string): Promise<void> {
  await chmod(directory, 0o700);
  for (const entry of await readdir(directory, { withFileTypes: true })) {
    const entryPath = path.join(directory, entry.name);
    if (entry.isDirectory()) await restrictToOwner(entryPath);
    else if (entry.isFile()) await chmod(entryPath, 0o600);
  }
}
