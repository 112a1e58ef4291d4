/**
 * `npm run docs:check`: reads the guide as one newcomer follows it. It starts one service the
 * README's way (a fresh data directory, no `ADMIN_EMAIL`/`ADMIN_PASSWORD`, so the first start
 * creates `admin@localhost` and prints its password once), then runs, in one bash and in order,
 * every `sh` block of the README's "Getting a token with curl" and then every `sh` block of
 * docs/api.md, with the printed password pasted where the README says to paste it.
 *
 * It fails when a block fails, when a reply is a 5xx, when a token the page extracted was
 * refused, or when the service's access log holds other non-2xx answers, in order, than the
 * guide announces: every request the guide expects to be refused says so in a comment of its
 * block (`# 412`, or an example body with `"status":400`), and nothing else may be refused.
 * The service runs from src/ (as `npm run dev` does), not from a build.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, waitUntilServing } from '../test/helpers/service-process.js';

const root = path.resolve(import.meta.dirname, '..');
const shellBlocks = (markdown: string) => [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);

const readme = await readFile(path.join(root, 'README.md'), 'utf8');
const walkthrough = readme.slice(readme.indexOf('## Getting a token with curl'));
const readmeBlocks = shellBlocks(walkthrough.slice(0, walkthrough.indexOf('\n## ', 3)));
const guideBlocks = shellBlocks(await readFile(path.join(root, 'docs', 'api.md'), 'utf8'));
const blocks = [...readmeBlocks, ...guideBlocks];
if (readmeBlocks.length === 0 || blocks.some((block) => /\bnpm (start|run dev)\b/.test(block))) {
  throw new Error('the README walkthrough has no sh block, or a block the check runs starts a service of its own');
}

/** The statuses other than 2xx that the guide announces, one per refused request. */
function announcedRefusals(block: string): number[] {
  return block
    .split('\n')
    .filter((line) => line.startsWith('#'))
    .flatMap((line) => {
      const status = /^#\s*(\d{3})\b/.exec(line)?.[1] ?? /"status":(\d{3})/.exec(line)?.[1];
      return status && !status.startsWith('2') ? [Number(status)] : [];
    });
}

const dataDir = await mkdtemp(path.join(tmpdir(), 'docs-check-'));
const port = await freePort();
// Run from the empty data directory, so a developer's .env in the repository changes nothing.
const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), path.join(root, 'src/server.ts')], {
  cwd: dataDir,
  env: { ...process.env, PORT: port, DATABASE_URL: '', DATA_DIR: dataDir, ADMIN_EMAIL: '', ADMIN_PASSWORD: '', LOG_LEVEL: 'info', JWT_SECRET: '' },
  stdio: ['ignore', 'pipe', 'pipe'],
});
let stdout = '';
let stderr = '';
child.stdout.on('data', (chunk) => (stdout += chunk));
child.stderr.on('data', (chunk) => (stderr += chunk));
const exited = new Promise((resolve) => child.on('exit', resolve));
const baseUrl = `http://127.0.0.1:${port}`;
let failed = false;
try {
  await waitUntilServing(`${baseUrl}/healthz`, child, () => stderr);
  const printed = /First admin created: (\S+) with password (\S+) /.exec(stderr);
  if (!printed || printed[1] !== 'admin@localhost') throw new Error(`the first start printed no admin password:\n${stderr}`);
  const script = [
    'set -euo pipefail',
    ...blocks.map((block) => block.replace(/^BASE=.*$/m, `BASE=${baseUrl}`).replace(/^ADMIN_PASSWORD='…'.*$/m, `ADMIN_PASSWORD='${printed[2]}'`)),
  ].join('\n');
  const run = spawnSync('bash', ['-c', script], { encoding: 'utf8', cwd: dataDir });
  process.stdout.write(run.stdout);
  process.stderr.write(run.stderr);
  const refusedToken = /"code":"(unauthenticated|invalid_token)"/.test(run.stdout);
  const serverError = /"status":5\d\d/.test(run.stdout);
  child.kill('SIGTERM');
  await exited;
  // The access log (flushed at exit) has every answer's status; the start-up's health polls are 200.
  const answered = stdout
    .split('\n')
    .filter((line) => line.includes('"request completed"'))
    .map((line) => JSON.parse(line) as { statusCode: number; method: string; url: string });
  const refused = answered.filter((entry) => entry.statusCode >= 300);
  // In order: the guide runs one request at a time, so the log lists them as the guide made them.
  const expected = blocks.flatMap(announcedRefusals);
  const actual = refused.map((entry) => entry.statusCode);
  const unexpected = JSON.stringify(expected) !== JSON.stringify(actual);
  if (unexpected) {
    console.log(`\nThe guide announces these refusals: ${expected.join(', ') || 'none'}; the service answered:`);
    for (const entry of refused) console.log(`  ${entry.statusCode} ${entry.method} ${entry.url}`);
  }
  failed = run.status !== 0 || refusedToken || serverError || unexpected;
  console.log(
    `\n${readmeBlocks.length} README and ${guideBlocks.length} docs/api.md blocks ran, ${answered.length} requests; exit ${run.status}` +
      `${refusedToken ? ', a token was refused' : ''}${serverError ? ', a 5xx' : ''}${unexpected ? ', refusals the guide does not announce' : ''}`,
  );
} finally {
  child.kill('SIGTERM');
  await exited;
  await rm(dataDir, { recursive: true, force: true });
}
console.log(failed ? 'docs check: FAILED' : 'docs check: OK');
process.exit(failed ? 1 : 0);
