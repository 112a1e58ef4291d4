/** What the benchmark scripts share: the service's environment, the seed data, the bare reference. */
import { randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import pg from 'pg';
import { freePort, postJson, startService } from '../test/helpers/service-process.js';
import { measure, type Figures, type Scenario } from './measure.js';

export const pick = <T>(items: T[]): T => items[Math.floor(Math.random() * items.length)]!;

/**
 * The service as `npm start` runs it: the build in dist/ (`npm run bench` builds it first when the
 * sources changed, as `npm start` does), not the sources through tsx.
 */
export function startBenchService(environment: Record<string, string>, nodeArguments: string[] = []) {
  return startService(environment, 'dist/server.js', nodeArguments);
}

export async function serviceEnvironment(database: { url?: string; dataDir?: string }, workers = 1): Promise<Record<string, string>> {
  return {
    PORT: await freePort(),
    // One address for every process of a run (as instances behind one load balancer have): the
    // tokens' issuer is PUBLIC_URL, whose default names the port, and the seeding process and
    // the measured one listen on different ports.
    PUBLIC_URL: 'http://127.0.0.1:3000',
    ...(database.url ? { DATABASE_URL: database.url } : { DATABASE_URL: '', DATA_DIR: database.dataDir! }),
    // The service as a user runs it: EdDSA access tokens (no JWT_SECRET) and LOG_LEVEL's default.
    LOG_LEVEL: 'info',
    ADMIN_EMAIL: 'bench-admin@example.com',
    ADMIN_PASSWORD: 'bench-admin-password',
    ACCESS_TOKEN_TTL: '3600',
    API_RATE_LIMIT: '100000000',
    LOGIN_RATE_LIMIT: '100000000',
    DATABASE_POOL_SIZE: '10',
    WORKERS: String(workers),
  };
}

async function inBatches<T>(count: number, batch: number, make: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let start = 0; start < count; start += batch) {
    results.push(...(await Promise.all(Array.from({ length: Math.min(batch, count - start) }, (_, offset) => make(start + offset)))));
  }
  return results;
}

export async function seed(baseUrl: string) {
  const login = await postJson(`${baseUrl}/api/auth/login`, { email: 'bench-admin@example.com', password: 'bench-admin-password' });
  const auth = { authorization: `Bearer ${login.body?.access_token}` };
  const users = await inBatches(50, 5, async (index) => {
    const email = `bench-${index}-${randomUUID().slice(0, 6)}@example.com`;
    const reply = await postJson(`${baseUrl}/api/auth/register`, { email, password: 'bench-password', name: `Bench ${index}` });
    return { id: String(reply.body?.id), email };
  });
  const variants = await inBatches(1000, 20, async (index) => {
    const id = randomUUID();
    const product = `bench-product-${index % 50}`;
    const sku = `BENCH-${index}-${id.slice(0, 4)}`;
    const reply = await postJson(`${baseUrl}/api/variants/${id}`, { product_id: product, sku, name: `Variant ${index}`, price: 1000 + index, stock: 5, attributes: { n: String(index) } }, auth);
    if (reply.status !== 201) throw new Error(`seeding failed: ${reply.status}`);
    return { id, sku, product };
  });
  // An API client that reads the catalogue, by its secret and by a client credentials token.
  const reader = await newApiClient(baseUrl, auth, 'Bench reader', ['variants:read']);
  const clientAuth = { secret: { authorization: `Bearer ${reader.secret}` }, token: { authorization: `Bearer ${reader.token}` } };
  return { auth, users, variants, clientAuth };
}

/** An API client with `scopes`: its secret, and an access token from the client credentials grant. */
export async function newApiClient(baseUrl: string, auth: Record<string, string>, name: string, scopes: string[]): Promise<{ secret: string; token: string }> {
  const client = await postJson(`${baseUrl}/api/clients`, { name, scopes }, auth);
  const granted = await fetch(`${baseUrl}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `grant_type=client_credentials&client_id=${client.body?.id}&client_secret=${client.body?.secret}`,
  }).then((reply) => reply.json() as Promise<{ access_token: string }>);
  return { secret: String(client.body?.secret), token: granted.access_token };
}

/** The scenarios of `npm run bench`, over the seeded data. */
export function benchScenarios(data: Awaited<ReturnType<typeof seed>>): Scenario[] {
  const headers = data.auth;
  return [
    { name: 'GET /api/variants/{id}', path: () => `/api/variants/${pick(data.variants).id}`, headers },
    { name: 'GET /api/variants/{id} (API client secret)', path: () => `/api/variants/${pick(data.variants).id}`, headers: data.clientAuth.secret },
    { name: 'GET /api/variants/{id} (API client token)', path: () => `/api/variants/${pick(data.variants).id}`, headers: data.clientAuth.token },
    { name: 'GET /api/variants/sku/{sku}', path: () => `/api/variants/sku/${pick(data.variants).sku.toLowerCase()}`, headers },
    { name: 'GET /api/variants/product/{id} (20)', path: () => `/api/variants/product/${pick(data.variants).product}`, headers },
    { name: 'GET /api/users/profile', path: () => '/api/users/profile', headers },
    { name: 'GET /api/users (page of 20)', path: () => '/api/users?limit=20', headers },
    { name: 'PUT /api/users/{id}/balance', method: 'PUT', path: () => `/api/users/${pick(data.users).id}/balance`, body: () => ({ delta: 1, reason: 'bench' }), headers },
    { name: 'POST /api/auth/login', method: 'POST', path: () => '/api/auth/login', body: () => ({ email: pick(data.users).email, password: 'bench-password' }) },
  ];
}

/** The bare reference of the by-id read (bench/reference-server.ts). */
export async function startReference(databaseUrl: string, poolMode = 'session') {
  return startService({ PORT: await freePort(), DATABASE_URL: databaseUrl, DATABASE_POOL_SIZE: '10', DATABASE_POOL_MODE: poolMode }, 'bench/reference-server.ts');
}

/**
 * Seconds of unmeasured load before each side of a comparison round, both started anew. Measured
 * in 2-second windows from the start of the load (bench/README.md, 2026-11-28), the service's CPU
 * per read came down from 350-450 µs to its steady level only after 6 to 10 s, its larger request
 * path compiled by V8's optimizing tier on a machine whose two cores the load keeps busy; the
 * reference's within 2 to 4 s. Three seconds measured the service's warm-up against the
 * reference's steady state.
 */
export const COMPARISON_WARM_UP_SECONDS = 10;

/** The reference's figures, and its own CPU time per request. */
async function measureReferenceCpu(
  databaseUrl: string,
  name: string,
  request: { variantIds: string[]; headers: Record<string, string> },
  options: { connections: number; duration: number; warmUpSeconds: number },
) {
  const reference = await startReference(databaseUrl);
  try {
    let cpuBefore = 0;
    const afterWarmUp = async () => void (cpuBefore = await cpuSeconds(reference.child.pid!));
    const figures = await measure(reference.baseUrl, { name, path: () => `/variants/${pick(request.variantIds)}`, headers: request.headers }, { ...options, afterWarmUp });
    return { figures, cpuMicroseconds: (((await cpuSeconds(reference.child.pid!)) - cpuBefore) / figures.total) * 1e6 };
  } finally {
    reference.child.kill('SIGTERM');
    await reference.exited;
  }
}

/**
 * `VACUUM (ANALYZE)` of a database, or of some of its tables: dead rows cleaned and statistics
 * taken before a comparison.
 */
export async function vacuum(databaseUrl: string, tables: string[] = []): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`vacuum (analyze) ${tables.map((table) => client.escapeIdentifier(table)).join(', ')}`);
  } finally {
    await client.end();
  }
}

/** CPU seconds a process has used so far (user + system), from /proc. */
export async function cpuSeconds(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).replace(/^.*\) /, '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * CPU seconds each PostgreSQL process on this machine has used so far, by pid: the database's
 * side of a request, which the service's own CPU time leaves out. A difference is taken over the
 * pids present at both readings (a backend that exits between them takes its time with it).
 */
export async function databaseCpuSeconds(): Promise<Map<number, number>> {
  const seconds = new Map<number, number>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    if (!stat.includes('(postgres)')) continue;
    const fields = stat.replace(/^.*\) /, '').split(' ');
    seconds.set(Number(entry), (Number(fields[11]) + Number(fields[12])) / 100);
  }
  return seconds;
}

/** The CPU seconds the database's processes used between two readings of databaseCpuSeconds. */
export function databaseCpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, seconds] of after) total += seconds - (before.get(pid) ?? seconds);
  return total;
}

export interface Comparison {
  /** Each round's figures: the reference's, then the service's. */
  rounds: { reference: Figures; service: Figures; serviceCpuMicroseconds: number; referenceCpuMicroseconds: number }[];
  /** Throughput and p99 of the service over those of the reference, summed over the rounds. */
  throughput: number;
  p99: number;
}

/**
 * `GET /api/variants/{id}` of the service against the bare reference, alternated round by round
 * (reference, service, reference, service...), so that both see the machine as it is at the
 * time; with the service's own CPU time per request. Each round starts a process of each, with
 * `environment` for the service's: on this VM one process of the same build can run a sixth
 * faster or slower than another for its whole life (bench/README.md, 2026-11-27), so one service
 * process against a new reference each round would weigh that luck on one side only.
 */
export async function compareWithReference(
  environment: Record<string, string>,
  databaseUrl: string,
  data: { auth: Record<string, string>; variants: { id: string }[] },
  load: { connections: number; duration: number },
  roundCount: number,
): Promise<Comparison> {
  const ids = data.variants.map((variant) => variant.id);
  const rounds: Comparison['rounds'] = [];
  // Both new processes warm up alike, long enough for the service's larger request path to be
  // compiled by V8's optimizing tier before the measured seconds start.
  const measured = { ...load, warmUpSeconds: COMPARISON_WARM_UP_SECONDS };
  for (let round = 0; round < roundCount; round++) {
    const { figures: reference, cpuMicroseconds: referenceCpuMicroseconds } = await measureReferenceCpu(databaseUrl, 'bare reference: 1 prepared query', { variantIds: ids, headers: data.auth }, measured);
    const service = await startBenchService({ ...environment, PORT: await freePort() });
    try {
      let cpuBefore = 0;
      const afterWarmUp = async () => void (cpuBefore = await cpuSeconds(service.child.pid!));
      // The token seeded by another process of the service: signing keys and sessions are in the database.
      const figures = await measure(service.baseUrl, { name: 'GET /api/variants/{id}', path: () => `/api/variants/${pick(ids)}`, headers: data.auth }, { ...measured, afterWarmUp });
      const serviceCpuMicroseconds = (((await cpuSeconds(service.child.pid!)) - cpuBefore) / figures.total) * 1e6;
      rounds.push({ reference, service: figures, serviceCpuMicroseconds, referenceCpuMicroseconds });
    } finally {
      service.child.kill('SIGTERM');
      await service.exited;
    }
  }
  const sum = (pickFigure: (round: Comparison['rounds'][number]) => number) => rounds.reduce((total, round) => total + pickFigure(round), 0);
  return {
    rounds,
    throughput: sum((round) => round.service.requestsPerSecond) / sum((round) => round.reference.requestsPerSecond),
    p99: sum((round) => round.service.p99) / sum((round) => Math.max(round.reference.p99, 0.01)),
  };
}
