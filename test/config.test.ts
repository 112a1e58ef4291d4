import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig, parseEnvironment, buildConfig } from '../src/config.js';
import { readFileSync } from 'node:fs';
import { EnvironmentSchema } from '../src/config.js';

describe('configuration', () => {
  it('lists every variable it reads in .env.example and in the README', () => {
    const example = readFileSync('.env.example', 'utf8');
    const readme = readFileSync('README.md', 'utf8');
    const listed = new Set([...example.matchAll(/^# ([A-Z][A-Z0-9_]+)=/gm)].map((match) => match[1]));
    for (const name of Object.keys(EnvironmentSchema.properties)) {
      assert.ok(listed.has(name), `${name} is in .env.example`);
      assert.ok(readme.includes(`\`${name}\``), `${name} is in the README`);
    }
  });

  it('applies the documented defaults', () => {
    const config = buildConfig(parseEnvironment({}));
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
    assert.equal(config.jwtSecret, undefined, 'Ed25519 keys from the database unless JWT_SECRET is set');
    assert.equal(config.signingKeyRotationDays, 90);
    assert.equal(config.refreshReuseIntervalSeconds, 10);
    assert.equal(config.databaseStatementTimeoutMs, 5000);
    assert.equal(config.requestTimeoutMs, 30000);
    assert.equal(config.publicUrl, 'http://127.0.0.1:3000');
    assert.equal(config.jwtIssuer, 'http://127.0.0.1:3000', 'the issuer is PUBLIC_URL unless JWT_ISSUER says otherwise');
    assert.equal(buildConfig(parseEnvironment({ PUBLIC_URL: 'https://shop.example/accounts/' })).jwtIssuer, 'https://shop.example/accounts', 'without the trailing slash');
    assert.equal(config.eventRetentionDays, 365);
    assert.equal(config.mfaFailureLimit, 10);
    assert.equal(config.signinSessionTtlSeconds, 2592000);
    assert.equal(config.signinBrandName, 'Shop');
    assert.equal(config.signinLogoUrl, undefined);
    assert.equal(config.signinDefaultLocale, 'en');
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
      [{ MFA_FAILURE_LIMIT: '0' }, /MFA_FAILURE_LIMIT/],
      [{ SIGNIN_LOGO_URL: 'http://cdn.example/logo.png' }, /SIGNIN_LOGO_URL/],
      [{ SIGNIN_DEFAULT_LOCALE: 'fr' }, /SIGNIN_DEFAULT_LOCALE/],
      [{ SIGNIN_SESSION_TTL: '0' }, /SIGNIN_SESSION_TTL/],
    ];
    for (const [environment, pattern] of cases) {
      assert.throws(() => loadConfig(environment), (error: unknown) => error instanceof ConfigError && pattern.test(error.message));
    }
  });

  it('runs on PostgreSQL without JWT_SECRET: the signing keys live in the database', () => {
    assert.equal(loadConfig({ DATABASE_URL: 'postgres://localhost/x' }).jwtSecret, undefined);
  });
});
