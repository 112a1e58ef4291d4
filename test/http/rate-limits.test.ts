import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { buildTestApp, createUser, problemOf, uniqueEmail, type TestApp } from '../helpers/test-app.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

async function redisAvailable(): Promise<boolean> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 500, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

const login = (testApp: TestApp, email: string, password = 'wrong-password', ip = '10.0.0.1') =>
  testApp.app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: ip, payload: { email, password } });

describe('rate limits', () => {
  it('limits logins per client address and email, with 429 rate_limited and Retry-After', async () => {
    const testApp = await buildTestApp({ environment: { LOGIN_RATE_LIMIT: '3' } });
    try {
      const email = uniqueEmail();
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await login(testApp, email)).statusCode);
      assert.deepEqual(statuses, [401, 401, 401, 429]);
      const limited = await login(testApp, email);
      assert.equal(limited.statusCode, 429);
      assert.equal(problemOf(limited).code, 'rate_limited');
      assert.ok(Number(limited.headers['retry-after']) > 0);
      assert.equal((await login(testApp, email.toUpperCase())).statusCode, 429, 'the email is counted without regard to case');
      assert.equal((await login(testApp, uniqueEmail())).statusCode, 401, 'another email has its own budget');
      assert.equal((await login(testApp, email, 'x', '10.0.0.2')).statusCode, 401, 'another address has its own budget');
    } finally {
      await testApp.close();
    }
  });

  it('limits the whole API per caller', async () => {
    const testApp = await buildTestApp({ environment: { API_RATE_LIMIT: '5' } });
    try {
      const user = await createUser(testApp.app);
      const other = await createUser(testApp.app);
      const statuses = [];
      for (let i = 0; i < 5; i++) {
        statuses.push((await testApp.app.inject({ method: 'GET', url: '/api/users/profile', headers: user.auth })).statusCode);
      }
      // createUser's own profile read spent the first of the five.
      assert.deepEqual(statuses, [200, 200, 200, 200, 429]);
      const limited = await testApp.app.inject({ method: 'GET', url: '/api/users/profile', headers: user.auth });
      assert.equal(problemOf(limited).code, 'rate_limited');
      assert.ok(Number(limited.headers['retry-after']) > 0);
      const otherCaller = await testApp.app.inject({ method: 'GET', url: '/api/users/profile', headers: other.auth });
      assert.equal(otherCaller.statusCode, 200, 'another caller has its own budget');
    } finally {
      await testApp.close();
    }
  });

  it('shares login counters between instances through Redis', async (t) => {
    if (!(await redisAvailable())) return t.skip('no Redis at REDIS_URL');
    const environment = { LOGIN_RATE_LIMIT: '4', REDIS_URL };
    const first = await buildTestApp({ environment });
    const second = await buildTestApp({ environment, ...(first.databaseUrl ? { databaseUrl: first.databaseUrl } : {}) });
    try {
      const email = uniqueEmail();
      const statuses = [];
      for (let i = 0; i < 6; i++) statuses.push((await login(i % 2 ? second : first, email)).statusCode);
      assert.deepEqual(statuses, [401, 401, 401, 401, 429, 429]);
    } finally {
      await second.app.close();
      await first.close();
    }
  });

  it('counts every request without a valid token per client address: logins, refused tokens, unknown routes', async () => {
    const testApp = await buildTestApp({ environment: { API_RATE_LIMIT: '6' } });
    try {
      const { app } = testApp;
      const ip = '10.1.0.1';
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await login(testApp, uniqueEmail(), 'wrong-password', ip)).statusCode);
      statuses.push((await app.inject({ method: 'GET', url: '/api/users/profile', remoteAddress: ip, headers: { authorization: 'Bearer forged.token.value' } })).statusCode);
      statuses.push((await app.inject({ method: 'GET', url: '/no/such/route', remoteAddress: ip })).statusCode);
      statuses.push((await app.inject({ method: 'GET', url: '/no/such/route', remoteAddress: ip, headers: { authorization: 'Bearer x' } })).statusCode);
      statuses.push((await login(testApp, uniqueEmail(), 'wrong-password', ip)).statusCode);
      assert.deepEqual(statuses, [401, 401, 401, 401, 404, 404, 429]);
      const limited = await app.inject({ method: 'GET', url: '/api/users', remoteAddress: ip });
      assert.equal(problemOf(limited).code, 'rate_limited');
      for (let i = 0; i < 10; i++) {
        assert.equal((await app.inject({ method: 'GET', url: '/healthz', remoteAddress: ip })).statusCode, 200, 'health probes are never limited');
        assert.equal((await app.inject({ method: 'GET', url: '/readyz', remoteAddress: ip })).statusCode, 200);
      }
      assert.equal((await login(testApp, uniqueEmail(), 'wrong-password', '10.1.0.2')).statusCode, 401, 'another address has its own budget');
    } finally {
      await testApp.close();
    }
  });

  it('believes X-Forwarded-For only from the proxies TRUST_PROXY names', async () => {
    const forwardedLogins = async (testApp: TestApp) => {
      const statuses = [];
      for (let i = 0; i < 4; i++) {
        const response = await testApp.app.inject({
          method: 'POST',
          url: '/api/auth/login',
          remoteAddress: '127.0.0.1',
          headers: { 'x-forwarded-for': `203.0.113.${i}` },
          payload: { email: uniqueEmail(), password: 'wrong-password' },
        });
        statuses.push(response.statusCode);
      }
      return statuses;
    };
    const untrusting = await buildTestApp({ environment: { API_RATE_LIMIT: '2' } });
    try {
      assert.deepEqual(await forwardedLogins(untrusting), [401, 401, 429, 429], 'without TRUST_PROXY every caller behind the proxy shares one budget');
    } finally {
      await untrusting.close();
    }
    const trusting = await buildTestApp({ environment: { API_RATE_LIMIT: '2', TRUST_PROXY: '127.0.0.1' } });
    try {
      assert.deepEqual(await forwardedLogins(trusting), [401, 401, 401, 401], 'each forwarded client has its own budget');
    } finally {
      await trusting.close();
    }
  });

  it('keeps limiting, on its own counters and without waiting, when Redis does not answer', async () => {
    const logLines: string[] = [];
    const testApp = await buildTestApp({ environment: { LOGIN_RATE_LIMIT: '3', REDIS_URL: 'redis://127.0.0.1:1' }, logLines });
    try {
      const email = uniqueEmail();
      const statuses = [];
      let slowest = 0;
      for (let i = 0; i < 6; i++) {
        const started = Date.now();
        statuses.push((await login(testApp, email)).statusCode);
        slowest = Math.max(slowest, Date.now() - started);
      }
      assert.deepEqual(statuses, [401, 401, 401, 429, 429, 429]);
      // Each login also hashes a password (about 50 ms); Redis may add at most 100 ms.
      assert.ok(slowest < 1000, `slowest login took ${slowest} ms`);
      const outageLines = logLines.filter((line) => line.includes('Redis does not answer'));
      assert.equal(outageLines.length, 1, 'the outage is logged once, not per request');
    } finally {
      await testApp.close();
    }
  });
});
