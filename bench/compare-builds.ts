/**
 * `npm run bench:builds -- --baseline=<git revision> [--rounds=4 --duration=5 --connections=32]
 * [--through-pgbouncer]`: the by-id read of this build (dist/) against the build of an earlier
 * revision and against the bare reference, the three alternated round by round in one run (so all
 * see the machine at the same time; each round starts the three in a rotated order), a new process
 * of each every round, each warmed up first.
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
import { COMPARISON_WARM_UP_SECONDS, pick, seed, serviceEnvironment, startReference } from './setup.js';

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
    return { name, script, environment, data: await seed(seeder.baseUrl), drop: scratch.drop };
  } finally {
    seeder.child.kill('SIGTERM');
    await seeder.exited;
  }
}

async function measureBuild(build: Build): Promise<Figures> {
  const service = await startService({ ...build.environment, LOG_LEVEL: 'info', PORT: await freePort() }, build.script);
  try {
    const ids = build.data.variants.map((variant) => variant.id);
    return { ...(await measure(service.baseUrl, { name: `${build.name}: GET /api/variants/{id}`, path: () => `/api/variants/${pick(ids)}`, headers: build.data.auth }, load)), name: build.name };
  } finally {
    service.child.kill('SIGTERM');
    await service.exited;
  }
}

/** The bare reference, over the current build's database, sent the current build's requests. */
async function measureReference(current: Build): Promise<Figures> {
  const reference = await startReference(current.environment.DATABASE_URL!, current.environment.DATABASE_POOL_MODE);
  try {
    const ids = current.data.variants.map((variant) => variant.id);
    return { ...(await measure(reference.baseUrl, { name: 'reference', path: () => `/variants/${pick(ids)}`, headers: current.data.auth }, load)), name: 'bare reference' };
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
  const sides: { name: string; run: () => Promise<Figures> }[] = [{ name: 'bare reference', run: () => measureReference(current) }, ...builds.map((build) => ({ name: build.name, run: () => measureBuild(build) }))];
  const figures = new Map<string, Figures[]>(sides.map((side) => [side.name, []]));
  const rounds = Number(options.rounds);
  for (let round = 0; round < rounds; round++) {
    const order = sides.map((_, index) => sides[(index + round) % sides.length]!);
    const measured: Figures[] = [];
    for (const side of order) {
      const result = await side.run();
      figures.get(side.name)!.push(result);
      measured.push(result);
    }
    console.log(`round ${round + 1}\n${formatTable(measured)}\n`);
  }
  const sum = (name: string, pickFigure: (result: Figures) => number) => figures.get(name)!.reduce((total, result) => total + pickFigure(result), 0);
  const ratio = (over: string, under: string) =>
    `throughput ${(sum(over, (result) => result.requestsPerSecond) / sum(under, (result) => result.requestsPerSecond)).toFixed(2)}x, p99 ${(sum(over, (result) => result.p99) / sum(under, (result) => Math.max(result.p99, 0.01))).toFixed(2)}x`;
  console.log(`Over ${rounds} rounds at ${load.connections} connections:`);
  for (const build of builds) console.log(`- ${build.name} / bare reference: ${ratio(build.name, 'bare reference')}`);
  if (builds.length === 2) console.log(`- ${builds[0]!.name} / ${builds[1]!.name}: ${ratio(builds[0]!.name, builds[1]!.name)}`);
} finally {
  for (const build of builds) await build.drop();
  baseline?.remove();
}
