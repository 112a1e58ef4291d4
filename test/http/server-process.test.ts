import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { freePort, waitUntilServing } from '../helpers/service-process.js';
import { buildApp } from '../../src/app.js';
import { openDatabase } from '../../src/db/database.js';
import { JWT_SECRET, createScratchDatabase, onPostgres, testConfig } from '../helpers/test-app.js';

const ADMIN_PASSWORD = 'process-admin-password';

describe('the server process', () => {
  it('logs JSON lines with request ids and no secrets, and exits 0 on SIGTERM after finishing', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'server-'));
    const scratch = onPostgres ? await createScratchDatabase() : undefined;
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: {
        ...process.env,
        PORT: String(port),
        DATA_DIR: dataDir,
        LOG_LEVEL: 'debug',
        ADMIN_EMAIL: 'boss@example.com',
        ADMIN_PASSWORD,
        JWT_SECRET,
        ...(scratch ? { DATABASE_URL: scratch.url } : { DATABASE_URL: '' }),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let said = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => {
      output += chunk;
      said += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const base = `http://127.0.0.1:${port}`;
      await waitUntilServing(`${base}/healthz`, child, () => output);
      const login = await fetch(`${base}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': 'login-request-1' },
        body: JSON.stringify({ email: 'boss@example.com', password: ADMIN_PASSWORD }),
      });
      assert.equal(login.status, 200);
      const tokens = (await login.json()) as { access_token: string; refresh_token: string };
      const profile = await fetch(`${base}/api/users/profile`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
      assert.equal(profile.status, 200);
      await fetch(`${base}/api/auth/refresh`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ refresh_token: tokens.refresh_token }),
      });

      child.kill('SIGTERM');
      assert.equal(await exited, 0);
      assert.match(said, new RegExp(`^Serving the API under ${base}/api/, its reference at ${base}/docs, the console at ${base}/admin \\(`, 'm'), 'start-up says where to go');

      const lines = output.split('\n').filter((line) => line.startsWith('{'));
      assert.ok(lines.length > 3);
      const entries = lines.map((line) => JSON.parse(line));
      assert.ok(entries.some((entry) => entry.reqId === 'login-request-1'), 'the request id is in the log');
      for (const secret of [ADMIN_PASSWORD, tokens.access_token, tokens.refresh_token, JWT_SECRET]) {
        assert.ok(!output.includes(secret), 'no password, token or key in the logs');
      }
    } finally {
      child.kill('SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
      await scratch?.drop();
    }
  });

  it('stops with one clear line for a database that does not exist or a bad LOG_LEVEL', async () => {
    const runToExit = (environment: Record<string, string>) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
          env: { ...process.env, PORT: '0', JWT_SECRET, DATABASE_URL: '', ...environment },
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let stderr = '';
        child.stderr.on('data', (chunk) => (stderr += chunk));
        // A bound for a hang only: a loaded machine may take long to compile and start.
        const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
        child.on('exit', (code) => {
          clearTimeout(timer);
          resolve({ code, stderr });
        });
      });
    const lines = (text: string) => text.split('\n').filter((line) => line.trim() !== '');

    const badLevel = await runToExit({ LOG_LEVEL: 'loud' });
    assert.equal(badLevel.code, 1);
    assert.deepEqual(lines(badLevel.stderr), ['invalid configuration: LOG_LEVEL must be one of: fatal, error, warn, info, debug, trace, silent']);

    // Signing keys sealed with one key, and the service started with another: one line, exit 1.
    const dataDir = await mkdtemp(path.join(tmpdir(), 'sealed-'));
    try {
      const sealingKey = randomBytes(32).toString('base64');
      const database = await openDatabase({ dataDir });
      const { app } = await buildApp({ config: testConfig({ JWT_SECRET: '', SIGNING_KEY_ENCRYPTION_KEY: sealingKey }), database, logger: false, tellOperator: () => {} });
      await app.close();
      const wrongKey = await runToExit({ JWT_SECRET: '', DATA_DIR: dataDir, SIGNING_KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64') });
      assert.equal(wrongKey.code, 1);
      assert.deepEqual(lines(wrongKey.stderr), ['failed to start: SIGNING_KEY_ENCRYPTION_KEY does not decrypt the stored signing keys: start with the key they were encrypted with']);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }

    if (onPostgres) {
      const missing = new URL(process.env.DATABASE_URL!);
      missing.pathname = '/no_such_database_here';
      const noDatabase = await runToExit({ DATABASE_URL: missing.toString() });
      assert.equal(noDatabase.code, 1);
      const said = lines(noDatabase.stderr);
      assert.equal(said.length, 1, noDatabase.stderr);
      assert.match(said[0]!, /^failed to start: .*database "no_such_database_here" does not exist/);
    }
  });
});
