/**
 * `npm run bench:builds -- --baseline=<git revision> [--rounds=4 --duration=5 --connections=32]
 * [--through-pgbouncer]`: the by-id read of this build (dist/) against the build of an earlier
 * revision and against two references (bench/reference-server.ts: the bare lookup, and the
 * stateless one, which reads the caller's session and user beside it by the simplest correct
 * code), alternated round by round in one run (so all see the machine at the same time; each
 * round starts them in a rotated order), a new process of each every round, each warmed up first,
 * each database vacuumed and analyzed after its seeding. Each side's own CPU time per request and
 * the database's (every PostgreSQL process on the machine) are printed beside the rates: on this
 * shared machine they move less than the rates do, and they say on which side a gap is.
 *
 * The earlier revision is unpacked with `git archive` into a temporary folder, its server built
 * there with this checkout's node_modules (its dependencies must be the same or close), and it runs
 * on a scratch database of its own, seeded through its own API: builds of different revisions may
 * have different migrations, so they cannot share one.
 *
 * `--through-pgbouncer` measures this build and the reference both through the PgBouncer of
 * README.md ("Behind PgBouncer", BENCH_PGBOUNCER_URL, by default 127.0.0.1:6432) with
 * `DATABASE_POOL_MODE=transaction`, and leaves the baseline out: a build from before issue 52
 * cannot run behind a pooler in transaction mode.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { freePort, startService } from '../test/helpers/service-process.js';
import { createScratchDatabase } from '../test/helpers/scratch-database.js';
import { formatTable, measure, type Figures } from './measure.js';
import { COMPARISON_WARM_UP_SECONDS, cpuSeconds, databaseCpuBetween, databaseCpuSeconds, pick, seed, serviceEnvironment, startReference, vacuum } from './setup.js';

const { values: options } = parseArgs({
  options: {
    baseline: { type: 'string' },
    rounds: { type: 'string', default: '4' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '32' },
    'through-pgbouncer': { type: 'boolean', default: false },
  },
});
const throughPooler = options['through-pgbouncer'];
if (!options.baseline && !throughPooler) throw new Error('give --baseline=<git revision> (or --through-pgbouncer)');

const root = path.resolve(import.meta.dirname, '..');
const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const poolerUrl = process.env.BENCH_PGBOUNCER_URL ?? 'postgres://postgres@127.0.0.1:6432/postgres';
const load = { connections: Number(options.connections), duration: Number(options.duration), warmUpSeconds: COMPARISON_WARM_UP_SECONDS };

/** A build: where its server is, its database, the environment it runs with, its seeded data. */
interface Build {
  name: string;
  script: string;
  environment: Record<string, string>;
  data: Awaited<ReturnType<typeof seed>>;
  drop(): Promise<void>;
}

/** The earlier revision's server, built in a folder of its own. */
function buildRevision(revision: string): { script: string; remove(): void } {
  const folder = mkdtempSync(path.join(tmpdir(), 'bench-baseline-'));
  execFileSync('sh', ['-c', `git -C "${root}" archive "${revision}" | tar -x -C "${folder}"`], { stdio: 'inherit' });
  symlinkSync(path.join(root, 'node_modules'), path.join(folder, 'node_modules'));
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: folder, stdio: 'inherit' });
  return { script: path.join(folder, 'dist/server.js'), remove: () => rmSync(folder, { recursive: true, force: true }) };
}

/** Its own scratch database, made directly on the server and reached as the build will reach it. */
async function prepare(name: string, script: string, pooled: boolean): Promise<Build> {
  const scratch = await createScratchDatabase(serverUrl, 'builds');
  const reached = new URL(pooled ? poolerUrl : serverUrl);
  reached.pathname = new URL(scratch.url).pathname;
  const environment = { ...(await serviceEnvironment({ url: reached.toString() })), ...(pooled ? { DATABASE_POOL_MODE: 'transaction' } : {}) };
  const seeder = await startService({ ...environment, LOG_LEVEL: 'info' }, script);
  try {
    const data = await seed(seeder.baseUrl);
    // As `npm run bench` does before its by-id comparison: statistics taken, as autovacuum would
    // have taken them in a shop that ran for a while, and the seeding's dead rows cleaned.
    await vacuum(scratch.url);
    return { name, script, environment, data, drop: scratch.drop };
  } finally {
    seeder.child.kill('SIGTERM');
    await seeder.exited;
  }
}

/** A side's figures and its own CPU time per request after the warm-up (steadier than req/s here). */
type Measured = Figures & { cpuMicroseconds: number; databaseCpuMicroseconds: number };

/** The load on one process, with that process's CPU time (user + system) per measured request. */
async function measureWithCpu(pid: number, baseUrl: string, name: string, requestPath: () => string, headers: Record<string, string>): Promise<Measured> {
  let cpuBefore = 0;
  let databaseBefore = new Map<number, number>();
  const afterWarmUp = async () => {
    cpuBefore = await cpuSeconds(pid);
    databaseBefore = await databaseCpuSeconds();
  };
  const figures = await measure(baseUrl, { name, path: requestPath, headers }, { ...load, afterWarmUp });
  const cpuMicroseconds = (((await cpuSeconds(pid)) - cpuBefore) / figures.total) * 1e6;
  const databaseCpuMicroseconds = (databaseCpuBetween(databaseBefore, await databaseCpuSeconds()) / figures.total) * 1e6;
  return { ...figures, name, cpuMicroseconds, databaseCpuMicroseconds };
}

async function measureBuild(build: Build): Promise<Measured> {
  const service = await startService({ ...build.environment, LOG_LEVEL: 'info', PORT: await freePort() }, build.script);
  try {
    const ids = build.data.variants.map((variant) => variant.id);
    return await measureWithCpu(service.child.pid!, service.baseUrl, build.name, () => `/api/variants/${pick(ids)}`, build.data.auth);
  } finally {
    service.child.kill('SIGTERM');
    await service.exited;
  }
}

/**
 * The stateless reference (bench/reference-server.ts): the bare read with the caller's session and
 * user read in its statement, by the simplest correct code; the ceiling of a build that keeps
 * nothing about its callers, as issue 52 asks of this one.
 */
const STATELESS = 'stateless reference';

/** A reference route, over the current build's database, sent the current build's requests. */
async function measureReference(current: Build, route: '/variants' | '/stateless/variants', name: string): Promise<Measured> {
  const reference = await startReference(current.environment.DATABASE_URL!, current.environment.DATABASE_POOL_MODE);
  try {
    const ids = current.data.variants.map((variant) => variant.id);
    return await measureWithCpu(reference.child.pid!, reference.baseUrl, name, () => `${route}/${pick(ids)}`, current.data.auth);
  } finally {
    reference.child.kill('SIGTERM');
    await reference.exited;
  }
}

const baseline = options.baseline && !throughPooler ? buildRevision(options.baseline) : undefined;
const builds: Build[] = [];
try {
  const current = await prepare(throughPooler ? 'this build (through PgBouncer)' : 'this build', path.join(root, 'dist/server.js'), throughPooler);
  builds.push(current);
  if (baseline) builds.push(await prepare(`build of ${options.baseline}`, baseline.script, false));
  const references = [
    { name: 'bare reference', run: () => measureReference(current, '/variants', 'bare reference') },
    { name: STATELESS, run: () => measureReference(current, '/stateless/variants', STATELESS) },
  ];
  const sides: { name: string; run: () => Promise<Measured> }[] = [...references, ...builds.map((build) => ({ name: build.name, run: () => measureBuild(build) }))];
  const figures = new Map<string, Measured[]>(sides.map((side) => [side.name, []]));
  const rounds = Number(options.rounds);
  for (let round = 0; round < rounds; round++) {
    const order = sides.map((_, index) => sides[(index + round) % sides.length]!);
    const measured: Measured[] = [];
    for (const side of order) {
      const result = await side.run();
      figures.get(side.name)!.push(result);
      measured.push(result);
    }
    console.log(`round ${round + 1}\n${formatTable(measured)}\nCPU a request (own + the database's): ${measured.map((side) => `${side.name} ${side.cpuMicroseconds.toFixed(0)} + ${side.databaseCpuMicroseconds.toFixed(0)} µs`).join(', ')}\n`);
  }
  const sum = (name: string, pickFigure: (result: Measured) => number) => figures.get(name)!.reduce((total, result) => total + pickFigure(result), 0);
  const ratio = (over: string, under: string) =>
    `throughput ${(sum(over, (result) => result.requestsPerSecond) / sum(under, (result) => result.requestsPerSecond)).toFixed(2)}x, p99 ${(sum(over, (result) => result.p99) / sum(under, (result) => Math.max(result.p99, 0.01))).toFixed(2)}x, own CPU a request ${(sum(over, (result) => result.cpuMicroseconds) / sum(under, (result) => result.cpuMicroseconds)).toFixed(2)}x, the database's ${(sum(over, (result) => result.databaseCpuMicroseconds) / sum(under, (result) => result.databaseCpuMicroseconds)).toFixed(2)}x`;
  console.log(`Over ${rounds} rounds at ${load.connections} connections:`);
  console.log(`- ${STATELESS} / bare reference: ${ratio(STATELESS, 'bare reference')}`);
  for (const build of builds) console.log(`- ${build.name} / bare reference: ${ratio(build.name, 'bare reference')}`);
  console.log(`- ${builds[0]!.name} / ${STATELESS}: ${ratio(builds[0]!.name, STATELESS)}`);
  if (builds.length === 2) console.log(`- ${STATELESS} / ${builds[1]!.name}: ${ratio(STATELESS, builds[1]!.name)}`);
  if (builds.length === 2) console.log(`- ${builds[0]!.name} / ${builds[1]!.name}: ${ratio(builds[0]!.name, builds[1]!.name)}`);
} finally {
  for (const build of builds) await build.drop();
  baseline?.remove();
}
