/**
 * `npm run bench:instructions [-- --requests=2000 --service=dist/server.js]`: the machine
 * instructions a by-id read costs the service and the bare reference, each counted by valgrind's
 * callgrind in its own process, on a scratch PostgreSQL database. Throughput on a shared 2-core
 * VM moves by a fifth from one round to the next; the count moves by a few percent, so a change
 * of the request path can be judged by it (bench/README.md). It counts user-space instructions
 * only: time in the kernel, cache misses and the load generator's share are not in it.
 * `--service` names another build's server.js (a worktree's), to compare two builds.
 */
import { execFileSync, spawn } from 'node:child_process';
import { readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { createScratchDatabase } from '../test/helpers/scratch-database.js';
import { freePort, waitUntilServing } from '../test/helpers/service-process.js';
import { pick, seed, serviceEnvironment, startBenchService } from './setup.js';

const { values: options } = parseArgs({
  options: { requests: { type: 'string', default: '2000' }, service: { type: 'string', default: 'dist/server.js' } },
});
/** Requests before counting starts, so the count is of optimized code, not of V8's first tiers. */
const WARM_UP_REQUESTS = 4000;
/** Under callgrind a request takes milliseconds: a few connections keep the process busy. */
const CONNECTIONS = 8;

interface Counted {
  name: string;
  instructionsPerRequest: number;
}

/**
 * Starts `script` under callgrind with counting off, warms it up, counts `requests` by-id reads
 * and reads the total from callgrind's dump.
 */
async function countInstructions(name: string, script: string[], environment: Record<string, string>, request: { path: () => string; headers: Record<string, string> }): Promise<Counted> {
  const outputFile = path.join(os.tmpdir(), `callgrind-${process.pid}-${Date.now()}.out`);
  const child = spawn(
    'valgrind',
    ['--tool=callgrind', '--smc-check=all-non-file', '--instr-atstart=no', `--callgrind-out-file=${outputFile}`, process.execPath, ...script],
    { env: { ...process.env, ...environment }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let errors = '';
  child.stderr.on('data', (chunk) => (errors += chunk));
  const exited = new Promise((resolve) => child.on('exit', resolve));
  try {
    const baseUrl = `http://127.0.0.1:${environment.PORT}`;
    await waitUntilServing(`${baseUrl}/healthz`, child, () => errors);
    const load = (amount: number) =>
      autocannon({ url: baseUrl, connections: CONNECTIONS, amount, timeout: 60, requests: [{ method: 'GET', headers: request.headers, setupRequest: (sent) => ({ ...sent, path: request.path() }) }] });
    const warm = await load(WARM_UP_REQUESTS);
    if (warm.non2xx + warm.errors > 0) throw new Error(`${name}: ${warm.non2xx} non-2xx answers and ${warm.errors} errors while warming up`);
    execFileSync('callgrind_control', ['--instr=on', String(child.pid)], { stdio: 'ignore' });
    const counted = await load(Number(options.requests));
    execFileSync('callgrind_control', ['--dump', String(child.pid)], { stdio: 'ignore' });
    if (counted.non2xx + counted.errors > 0) throw new Error(`${name}: ${counted.non2xx} non-2xx answers and ${counted.errors} errors while counting`);
    // The dump is written beside the file named, with a suffix; the main thread's holds the counts of all.
    const dumps = (await readdir(os.tmpdir())).filter((file) => file.startsWith(path.basename(outputFile)));
    let instructions = 0;
    for (const dump of dumps) {
      const totals = /^(?:summary|totals): (\d+)/m.exec(await readFile(path.join(os.tmpdir(), dump), 'utf8'));
      instructions = Math.max(instructions, Number(totals?.[1] ?? 0));
    }
    if (instructions === 0) throw new Error(`${name}: callgrind wrote no counts\n${errors}`);
    return { name, instructionsPerRequest: instructions / counted.requests.total };
  } finally {
    child.kill('SIGKILL');
    await exited;
    for (const dump of (await readdir(os.tmpdir())).filter((file) => file.startsWith(path.basename(outputFile)))) await rm(path.join(os.tmpdir(), dump), { force: true });
  }
}

try {
  execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
} catch {
  throw new Error('valgrind is not installed (Debian: apt-get install valgrind)');
}
const scratch = await createScratchDatabase(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', 'instructions');
try {
  // Seeded by the service running normally: under callgrind, seeding would take minutes.
  const seeder = await startBenchService(await serviceEnvironment({ url: scratch.url }));
  const data = await seed(seeder.baseUrl);
  seeder.child.kill('SIGTERM');
  await seeder.exited;
  const ids = data.variants.map((variant) => variant.id);
  const service = await countInstructions('service: GET /api/variants/{id}', [options.service], await serviceEnvironment({ url: scratch.url }), {
    path: () => `/api/variants/${pick(ids)}`,
    // The seeder's admin token: the signing keys and the session are in the database.
    headers: data.auth,
  });
  const reference = await countInstructions(
    'bare reference: 1 prepared query',
    ['--import', 'tsx', 'bench/reference-server.ts'],
    { PORT: await freePort(), DATABASE_URL: scratch.url, DATABASE_POOL_SIZE: '10' },
    // The same request as the service's, token included (the reference reads no token).
    { path: () => `/variants/${pick(ids)}`, headers: data.auth },
  );
  for (const counted of [reference, service]) console.log(`${counted.name}: ${(counted.instructionsPerRequest / 1000).toFixed(1)}k instructions a request`);
  console.log(`Service / bare reference: ${(service.instructionsPerRequest / reference.instructionsPerRequest).toFixed(2)}x the instructions (${options.requests} requests counted, user space only).`);
} finally {
  await scratch.drop();
}
