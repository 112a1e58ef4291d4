import { createHash } from 'node:crypto';
import { chmod, mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect, sql, type PostgresPool, type PostgresPoolClient, type PostgresQueryResult } from 'kysely';
import pg from 'pg';
import { TransactionMigrationLockAdapter } from './migration-lock.js';
import { PGliteDialect } from './pglite-dialect.js';
import { TracedDialect } from './traced-dialect.js';
import type { Database } from './tables.js';

/**
 * `session`: every connection is the service's own from start to end, and statements run as
 * named prepared statements. `transaction`: behind a pooler in transaction mode (PgBouncer's),
 * where consecutive transactions may run on different server connections, so nothing is kept on
 * one: statements are unnamed, and no setting is sent at start (API.md section 17).
 */
export type PoolMode = 'session' | 'transaction';

export interface DatabaseOptions {
  /** postgres://… to use a server; unset for the embedded PGlite database. */
  databaseUrl?: string | undefined;
  /** Where PGlite keeps its files; 'memory://' keeps nothing. */
  dataDir: string;
  poolSize?: number;
  /** How the connections are pooled outside this process (PostgreSQL); `session` by default. */
  poolMode?: PoolMode;
  /**
   * PostgreSQL: the longest a statement may run, enforced on the client (the network may drop
   * packets) and, in session mode, sent as the connection's statement_timeout.
   */
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
  close(): Promise<void>;
}

const INT8_OID = 20;
const parseInt8 = (value: string) => Number(value);

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  const pool = options.databaseUrl ? createPool(options.databaseUrl, options.poolSize ?? 10, options.statementTimeoutMs ?? 5000, options.poolMode ?? 'session') : undefined;
  const plain = pool ? new PooledPostgresDialect(pool, options.poolMode ?? 'session') : new PGliteDialect(await openPGlite(options.dataDir, options.image));
  const dialect = options.traced ? new TracedDialect(plain) : plain;
  const onStatement = options.onStatement;
  const db = new Kysely<Database>({ dialect, ...(onStatement ? { log: (event) => onStatement(event.query.sql) } : {}) });
  return {
    db,
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    concurrent: pool !== undefined,
    poolStats: () => (pool ? { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount } : { total: 1, idle: 0, waiting: 0 }),
    close: () => db.destroy(),
  };
}

/**
 * Kysely's PostgreSQL dialect over pg's pool, as Kysely hands out and releases the pool's clients,
 * with two things of this service's own, both through pg's public API:
 * - in session mode, parameterised statements are named prepared statements (`statementName`);
 * - a client whose statement never got its answer (pg's `query_timeout`, 'Query read timeout')
 *   is released with that error, which makes the pool end it (pg ends a client with a query in
 *   flight by destroying its socket) instead of handing the busy connection to the next request.
 * Migrations take their lock inside their transaction (migration-lock.ts).
 */
class PooledPostgresDialect extends PostgresDialect {
  constructor(pool: pg.Pool, mode: PoolMode) {
    super({ pool: new KyselyPool(pool, mode) });
  }

  override createAdapter() {
    return new TransactionMigrationLockAdapter();
  }
}

/** pg's pool as Kysely's PostgresDriver uses it: `connect()`, then `query` and `release()` on the client. */
class KyselyPool implements PostgresPool {
  /** One wrapper per pg client, so Kysely keeps one connection object per client (it keys them by client). */
  readonly #clients = new WeakMap<pg.PoolClient, KyselyClient>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly mode: PoolMode,
  ) {}

  async connect(): Promise<PostgresPoolClient> {
    const client = await this.pool.connect();
    let wrapped = this.#clients.get(client);
    if (!wrapped) this.#clients.set(client, (wrapped = new KyselyClient(client, this.mode)));
    // Kysely's type also has a cursor's form of `query`, used only for streaming, which the service does not do.
    return wrapped as unknown as PostgresPoolClient;
  }

  end(): Promise<void> {
    return this.pool.end();
  }
}

class KyselyClient {
  /** Set when a statement's answer never came: the connection is not used again. */
  #unanswered: Error | undefined;

  constructor(
    private readonly client: pg.PoolClient,
    private readonly mode: PoolMode,
  ) {}

  async query<Row>(text: string, values: unknown[]): Promise<PostgresQueryResult<Row>> {
    const name = this.mode === 'session' && values.length > 0 ? statementName(text) : null;
    try {
      // pg's result, whose `command` pg types as any string.
      return (await (name ? this.client.query({ name, text, values }) : this.client.query(text, values))) as unknown as PostgresQueryResult<Row>;
    } catch (error) {
      if ((error as Error).message === 'Query read timeout') this.#unanswered = error as Error;
      throw error;
    }
  }

  release(): void {
    const error = this.#unanswered;
    this.#unanswered = undefined;
    // With an error, the pool ends the client rather than keep it (pg-pool's `release(err)`).
    this.client.release(error);
  }
}

const statementNames = new Map<string, string | null>();
/**
 * The prepared statement's name for a text, so PostgreSQL parses and plans each distinct statement
 * once per connection instead of on every request (Kysely emits a fixed text per query shape, so
 * the set of names stays small); null for a pattern search (ILIKE), whose best plan depends on the
 * pattern (a trigram index for a rare one), where a cached generic plan would scan the table.
 */
function statementName(text: string): string | null {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = / ilike /i.test(text) ? null : `k_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
    statementNames.set(text, name);
  }
  return name;
}

function createPool(connectionString: string, max: number, statementTimeoutMs: number, mode: PoolMode): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max,
    // Sent at start, a setting of the session: behind a pooler in transaction mode the pooler's
    // server connections carry their own (README, "Behind PgBouncer"), and the client's below holds.
    ...(mode === 'session' ? { statement_timeout: statementTimeoutMs } : {}),
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
  });
  return pool;
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
