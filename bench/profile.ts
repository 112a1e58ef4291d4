/**
 * `npm run bench:profile [-- --seconds=10 --log-level=info --keep=file.cpuprofile --mixed]`: runs the
 * service under `node --cpu-prof` on a scratch PostgreSQL database, drives `GET /api/variants/{id}`
 * with 16 connections, stops it, and prints where its CPU time went under that load (start-up,
 * seeding and anything before left out): the top functions by self time and the share of each
 * package (or of the service's own code). With `--mixed`, every other scenario of `npm run
 * bench` runs for 2 s first, as in the bench.
 */
import { copyFile, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createScratchDatabase } from '../test/helpers/scratch-database.js';
import { runCheckout } from './checkout.js';
import { measure } from './measure.js';
import { benchScenarios, seed, serviceEnvironment, startBenchService } from './setup.js';

const { values: options } = parseArgs({
  options: { seconds: { type: 'string', default: '10' }, 'log-level': { type: 'string', default: 'info' }, keep: { type: 'string' }, mixed: { type: 'boolean', default: false } },
});
const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const scratch = await createScratchDatabase(serverUrl, 'profile');
const profileDirectory = await mkdtemp(path.join(os.tmpdir(), 'cpu-profile-'));
try {
  const environment = { ...(await serviceEnvironment({ url: scratch.url })), LOG_LEVEL: options['log-level'] };
  const service = await startBenchService(environment, ['--cpu-prof', `--cpu-prof-dir=${profileDirectory}`]);
  const data = await seed(service.baseUrl);
  if (options.mixed) {
    // As in `npm run bench`, where the by-id read is compared after every other scenario has run.
    for (const scenario of benchScenarios(data)) await measure(service.baseUrl, scenario, { connections: 16, duration: 2 });
    await runCheckout(service.baseUrl, data.auth, { connections: 16, duration: 2 });
  }
  const figures = await measure(service.baseUrl, benchScenarios(data)[0]!, { connections: 16, duration: Number(options.seconds) });
  console.log(`${figures.requestsPerSecond.toFixed(0)} req/s, p99 ${figures.p99} ms, LOG_LEVEL=${options['log-level']}`);
  service.child.kill('SIGTERM');
  await service.exited;

  const file = (await readdir(profileDirectory)).find((name) => name.endsWith('.cpuprofile'));
  if (!file) throw new Error('no profile was written');
  if (options.keep) await copyFile(path.join(profileDirectory, file), options.keep);
  const profile = JSON.parse(await readFile(path.join(profileDirectory, file), 'utf8')) as Profile;
  // Only the measured load counts: start-up, seeding and the warm-up second come before it.
  const profiledMicroseconds = profile.timeDeltas.reduce((sum, delta) => sum + delta, 0);
  const loadStartsAt = profiledMicroseconds - (Number(options.seconds) - 1) * 1e6;
  const selfTime = new Map<number, number>();
  let clock = 0;
  profile.samples.forEach((nodeId, index) => {
    clock += profile.timeDeltas[index] ?? 0;
    if (clock >= loadStartsAt) selfTime.set(nodeId, (selfTime.get(nodeId) ?? 0) + (profile.timeDeltas[index] ?? 0));
  });
  const total = [...selfTime.values()].reduce((sum, time) => sum + time, 0);
  const byFunction = new Map<string, number>();
  const byOwner = new Map<string, number>();
  for (const node of profile.nodes) {
    const time = selfTime.get(node.id) ?? 0;
    if (time === 0) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const owner = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1] ?? (url.includes('/src/') ? 'the service (src/)' : url.startsWith('node:') ? 'node core' : url ? url : functionName || '(native)');
    const name = `${functionName || '(anonymous)'} ${url ? `${url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/src\//, 'src/')}:${lineNumber + 1}` : ''}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + time);
    byOwner.set(owner, (byOwner.get(owner) ?? 0) + time);
  }
  const share = (time: number) => `${((time / total) * 100).toFixed(1)}%`;
  console.log('\n| self time | function |\n|---:|---|');
  for (const [name, time] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.PROFILE_TOP ?? 20))) console.log(`| ${share(time)} | ${name} |`);
  console.log('\n| self time | package |\n|---:|---|');
  for (const [owner, time] of [...byOwner].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`| ${share(time)} | ${owner} |`);
} finally {
  await rm(profileDirectory, { recursive: true, force: true });
  await scratch.drop();
}
