import cluster from 'node:cluster';
import v8 from 'node:v8';
import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { openDatabase } from './db/database.js';
import { startTracing } from './tracing.js';
import { logDestination } from './http/log-destination.js';
import { serveClusterMetrics } from './http/metrics.js';

function readConfig(): Config {
  try {
    const config = loadConfig();
    if (config.workers > 1 && !config.databaseUrl) {
      throw new ConfigError('invalid configuration: WORKERS above 1 needs DATABASE_URL (PGlite is one process)');
    }
    return config;
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

async function serve(config: Config): Promise<void> {
  // Before anything else, so the first request is traced; unset OTEL_* variables load nothing.
  const tracing = await startTracing();
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.databasePoolSize,
    poolMode: config.databasePoolMode,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
    traced: tracing !== undefined,
  });
  const { app } = await buildApp({ config, database, tracing, logger: { stream: logDestination({ fd: 1, sharedWithOtherProcesses: cluster.isWorker }) } });
  if (tracing) app.addHook('onClose', () => tracing.shutdown());

  // SIGTERM/SIGINT: stop accepting, let requests in flight finish, close the database, exit 0.
  closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'shutting down after an error');
    else app.log.info({ signal }, 'shutting down');
    await app.close();
  });

  await app.listen({ port: config.port, host: config.host });
  // For the person who typed `npm start`: where to go next, in plain words (one worker says it).
  if (!cluster.isWorker || cluster.worker?.id === 1) {
    const { port } = app.server.address() as { port: number };
    const base = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
    process.stderr.write(`Serving the API under ${base}/api/, its reference at ${base}/docs, the console at ${base}/admin (${config.databaseUrl ? 'PostgreSQL' : `embedded database in ${config.dataDir}`}).\n`);
  }
}

/** WORKERS=N: N processes share the port through node:cluster; each is a stateless instance. */
function superviseWorkers(count: number): void {
  let stopping = false;
  serveClusterMetrics();
  for (let index = 0; index < count; index++) cluster.fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
      return;
    }
    process.stderr.write(`worker ${worker.process.pid} exited (${signal ?? code}); starting another\n`);
    cluster.fork();
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      stopping = true;
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    });
  }
}

/**
 * V8 moves an allocation site to the old generation once most of its objects outlive a young
 * collection. At start-up under load (cold code, requests in flight across small young
 * collections) it did so for the request path's own objects (the request, its headers, rows),
 * and kept that for the life of the process: every young collection then took 4 to 6 ms instead
 * of about 1 ms, with a request's objects promoted and left for the old generation's collector
 * (bench/README.md, "Where the time goes"). Requests' objects are short-lived by nature.
 */
v8.setFlagsFromString('--no-allocation-site-pretenuring');

const config = readConfig();
if (config.workers > 1 && cluster.isPrimary) {
  superviseWorkers(config.workers);
} else {
  serve(config).catch((error: unknown) => {
    // One line an operator can act on; the stack of a start-up failure says nothing more to them.
    process.stderr.write(`failed to start: ${(error as Error).message ?? String(error)}\n`);
    process.exit(1);
  });
}
