/**
 * `npm run bench:profile [-- --seconds=10 --log-level=info --keep=file.cpuprofile]`: runs the service under
 * `node --cpu-prof` on a scratch PostgreSQL database, drives `GET /api/variants/{id}` with
 * 16 connections, stops it, and prints where its CPU time went under load (start-up and the
 * seeding left out): the top functions by self time and the share of each package (or of the
 * service's own code).
 */
import { randomUUID } from 'node:crypto';
import { copyFile, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createScratchDatabase } from '../test/helpers/scratch-database.js';
import { freePort, postJson, startService } from '../test/helpers/service-process.js';
import { measure } from './measure.js';

const { values: options } = parseArgs({ options: { seconds: { type: 'string', default: '10' }, 'log-level': { type: 'string', default: 'info' }, keep: { type: 'string' } } });
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
  const environment = {
    PORT: await freePort(),
    DATABASE_URL: scratch.url,
    JWT_SECRET: randomUUID() + randomUUID(),
    ADMIN_EMAIL: 'profile-admin@example.com',
    ADMIN_PASSWORD: 'profile-admin-password',
    API_RATE_LIMIT: '100000000',
    LOG_LEVEL: options['log-level'],
  };
  const service = await startService(environment, 'src/server.ts', ['--cpu-prof', `--cpu-prof-dir=${profileDirectory}`]);
  const login = await postJson(`${service.baseUrl}/api/auth/login`, { email: environment.ADMIN_EMAIL, password: environment.ADMIN_PASSWORD });
  const auth = { authorization: `Bearer ${login.body?.access_token}` };
  const ids: string[] = [];
  for (let index = 0; index < 200; index++) {
    const reply = await postJson(`${service.baseUrl}/api/variants`, { product_id: `p-${index % 10}`, sku: `PROF-${index}`, name: `V${index}`, price: 100, attributes: { n: String(index) } }, auth);
    ids.push(String(reply.body?.id));
  }
  const figures = await measure(service.baseUrl, { name: 'GET /api/variants/{id}', path: () => `/api/variants/${ids[Math.floor(Math.random() * ids.length)]}`, headers: auth }, { connections: 16, duration: Number(options.seconds) });
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
  for (const [name, time] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(`| ${share(time)} | ${name} |`);
  console.log('\n| self time | package |\n|---:|---|');
  for (const [owner, time] of [...byOwner].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`| ${share(time)} | ${owner} |`);
} finally {
  await rm(profileDirectory, { recursive: true, force: true });
  await scratch.drop();
}
