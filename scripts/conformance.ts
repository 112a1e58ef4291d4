/**
 * `npm run conformance`: starts the service on a scratch database (PostgreSQL with DATABASE_URL,
 * else PGlite in a temporary DATA_DIR), signs in, and runs Schemathesis against /openapi.json
 * with every check. The operations that take away the caller's own rights (delete, erase, role, status,
 * change-password, ending sessions, deleting one's own account) run in a second pass as a throw-away admin, so the first
 * pass keeps its token.
 * Schemathesis is `st` from PATH, or the command SCHEMATHESIS names. Extra arguments go to `st`.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createScratchDatabase } from '../test/helpers/scratch-database.js';
import { freePort, postJson, startService } from '../test/helpers/service-process.js';

const SELF_AFFECTING = [
  'DELETE /api/users/{id}',
  'PUT /api/users/{id}/role',
  'PUT /api/users/{id}/status',
  'PUT /api/users/change-password',
  'DELETE /api/users/{id}/sessions',
  'DELETE /api/users/{id}/sessions/{session_id}',
  'DELETE /api/auth/sessions/{id}',
  'DELETE /api/users/profile',
  'POST /api/users/{id}/erase',
];
const schemathesis = process.env.SCHEMATHESIS ?? 'st';
const maxExamples = process.env.CONFORMANCE_EXAMPLES ?? '40';
const extraArguments = process.argv.slice(2);

function runSchemathesis(baseUrl: string, token: string, filter: string[]): Promise<number> {
  const args = [
    '--config-file',
    path.resolve(import.meta.dirname, '..', 'schemathesis.toml'),
    'run',
    `${baseUrl}/openapi.json`,
    '--header',
    `Authorization: Bearer ${token}`,
    '--checks',
    'all',
    '--max-examples',
    maxExamples,
    '--seed',
    process.env.CONFORMANCE_SEED ?? '1',
    '--generation-database',
    'none',
    '--no-color',
    // One worker: with two, CPython 3.11's parser fails inside Hypothesis now and then
    // ("AST constructor recursion depth mismatch"), a fault of the tool's process, not of the API.
    '--workers',
    '1',
    ...filter,
    ...extraArguments,
  ];
  return new Promise((resolve) => {
    // scripts/schemathesis_hooks.py: a serializer for the import's file bodies (CSV, JSON lines).
    const hooks = { SCHEMATHESIS_HOOKS: 'schemathesis_hooks', PYTHONPATH: [import.meta.dirname, process.env.PYTHONPATH].filter(Boolean).join(path.delimiter) };
    const child = spawn(schemathesis, args, { stdio: 'inherit', env: { ...process.env, ...hooks } });
    child.on('exit', (code) => resolve(code ?? 1));
    child.on('error', (error) => {
      console.error(`cannot run Schemathesis (${schemathesis}): ${error.message}`);
      resolve(1);
    });
  });
}

const serverUrl = process.env.DATABASE_URL;
const scratch = serverUrl ? await createScratchDatabase(serverUrl, 'conformance') : undefined;
const dataDir = scratch ? undefined : await mkdtemp(path.join(tmpdir(), 'conformance-'));
const adminPassword = randomUUID();
const service = await startService({
  PORT: await freePort(),
  ADMIN_EMAIL: 'conformance-admin@example.com',
  ADMIN_PASSWORD: adminPassword,
  API_RATE_LIMIT: '10000000',
  LOGIN_RATE_LIMIT: '10000000',
  JWT_SECRET: randomUUID() + randomUUID(),
  LOG_LEVEL: 'error',
  ...(scratch ? { DATABASE_URL: scratch.url } : { DATABASE_URL: '', DATA_DIR: dataDir! }),
});

let failed = 0;
try {
  const signIn = async (email: string, password: string) => {
    const reply = await postJson(`${service.baseUrl}/api/auth/login`, { email, password });
    if (reply.status !== 200) throw new Error(`cannot sign in as ${email}: ${reply.status}`);
    return String(reply.body?.access_token);
  };
  const adminToken = await signIn('conformance-admin@example.com', adminPassword);
  const exclusions = SELF_AFFECTING.flatMap((name) => ['--exclude-name', name]);
  console.log('== Schemathesis: every operation but those that take away the caller\'s own rights');
  failed += await runSchemathesis(service.baseUrl, adminToken, exclusions);

  const throwAway = { email: `throw-away-${randomUUID()}@example.com`, password: randomUUID(), name: 'Throw-away admin' };
  const registered = await postJson(`${service.baseUrl}/api/auth/register`, throwAway);
  const promoted = await postJson(
    `${service.baseUrl}/api/users/${String(registered.body?.id)}/role`,
    { role: 'admin' },
    { authorization: `Bearer ${adminToken}` },
    'PUT',
  );
  if (promoted.status !== 200) throw new Error(`cannot promote the throw-away admin: ${promoted.status}`);
  const throwAwayToken = await signIn(throwAway.email, throwAway.password);
  console.log('== Schemathesis: the operations that take away the caller\'s own rights, as a throw-away admin');
  failed += await runSchemathesis(service.baseUrl, throwAwayToken, SELF_AFFECTING.flatMap((name) => ['--include-name', name]));
} finally {
  service.child.kill('SIGTERM');
  await service.exited;
  await scratch?.drop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
}
console.log(failed === 0 ? 'conformance: OK' : 'conformance: FAILED');
process.exit(failed === 0 ? 0 : 1);
