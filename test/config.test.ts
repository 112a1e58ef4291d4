import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig, parseEnvironment, buildConfig } from '../src/config.js';

describe('configuration', () => {
  it('applies the documented defaults', () => {
    const config = buildConfig(parseEnvironment({}), () => 'x'.repeat(40));
    assert.equal(config.port, 3000);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.accessTokenTtlSeconds, 900);
    assert.equal(config.refreshTokenTtlSeconds, 2592000);
    assert.equal(config.allowRegistration, true);
    assert.equal(config.currency, 'USD');
    assert.equal(config.loginRateLimit, 10);
    assert.equal(config.apiRateLimit, 1000);
    assert.equal(config.logLevel, 'info');
    assert.equal(config.dataDir, path.resolve('./data'));
  });

  it('refuses a bad value with a message naming the variable', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ PORT: 'eighty' }, /PORT/],
      [{ PORT: '70000' }, /PORT/],
      [{ CURRENCY: 'usd' }, /CURRENCY/],
      [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL/],
      [{ ALLOW_REGISTRATION: 'perhaps' }, /ALLOW_REGISTRATION/],
      [{ JWT_SECRET: 'short' }, /JWT_SECRET/],
      [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL/],
    ];
    for (const [environment, pattern] of cases) {
      assert.throws(() => loadConfig(environment), (error: unknown) => error instanceof ConfigError && pattern.test(error.message));
    }
  });

  it('requires JWT_SECRET with DATABASE_URL', () => {
    assert.throws(() => loadConfig({ DATABASE_URL: 'postgres://localhost/x' }), /JWT_SECRET is required/);
  });

  it('generates a JWT secret once into DATA_DIR and reuses it', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'config-'));
    try {
      const first = loadConfig({ DATA_DIR: dataDir });
      const second = loadConfig({ DATA_DIR: dataDir });
      assert.equal(first.jwtSecret, second.jwtSecret);
      assert.ok(Buffer.byteLength(first.jwtSecret) >= 32);
      assert.equal((await readFile(path.join(dataDir, 'jwt-secret'), 'utf8')).trim(), first.jwtSecret);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
