/**
 * `npm run docs:check`: runs every `sh` block of docs/api.md, in order, in one bash, against a
 * scratch service started with the page's own admin, and fails when a block fails, when a reply
 * is a 5xx, or when a token the page extracted was refused (the page's commands would not work).
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, startService } from '../test/helpers/service-process.js';

const root = path.resolve(import.meta.dirname, '..');
const page = await readFile(path.join(root, 'docs', 'api.md'), 'utf8');
const blocks = [...page.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!).filter((block) => !block.includes('npm start'));

const dataDir = await mkdtemp(path.join(tmpdir(), 'docs-check-'));
const service = await startService({
  PORT: await freePort(),
  DATABASE_URL: '',
  DATA_DIR: dataDir,
  ADMIN_EMAIL: 'admin@example.com',
  ADMIN_PASSWORD: 'change-me-now',
});
let failed = false;
try {
  const script = ['set -euo pipefail', ...blocks.map((block) => block.replace(/^BASE=.*$/m, `BASE=${service.baseUrl}`))].join('\n');
  const run = spawnSync('bash', ['-c', script], { encoding: 'utf8', cwd: dataDir });
  process.stdout.write(run.stdout);
  process.stderr.write(run.stderr);
  const refusedToken = /"code":"(unauthenticated|invalid_token)"/.test(run.stdout);
  const serverError = /"status":5\d\d/.test(run.stdout);
  failed = run.status !== 0 || refusedToken || serverError;
  console.log(`\n${blocks.length} blocks ran; exit ${run.status}${refusedToken ? ', a token was refused' : ''}${serverError ? ', a 5xx' : ''}`);
} finally {
  service.child.kill('SIGTERM');
  await service.exited;
  await rm(dataDir, { recursive: true, force: true });
}
console.log(failed ? 'docs check: FAILED' : 'docs check: OK');
process.exit(failed ? 1 : 0);
