import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { freePort } from '../helpers/service-process.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { buildTestApp, createScratchDatabase, loginAdmin, onPostgres, problemOf } from '../helpers/test-app.js';

/** A scratch database reached through a TCP proxy the test can cut, stall and restore. */
async function databaseBehindProxy() {
  const scratch = await createScratchDatabase();
  const direct = new URL(scratch.url);
  const proxy = new TcpProxy(Number(await freePort()), { host: direct.hostname, port: Number(direct.port || 5432) });
  await proxy.start();
  const viaProxy = new URL(scratch.url);
  viaProxy.hostname = '127.0.0.1';
  viaProxy.port = String(proxy.port);
  return { scratch, proxy, viaProxy };
}

describe('database outage (PostgreSQL)', { skip: !onPostgres && 'needs PostgreSQL' }, () => {
  it('answers 503 unavailable quickly while the database is away, and recovers without a restart', async () => {
    const { scratch, proxy, viaProxy } = await databaseBehindProxy();
    const testApp = await buildTestApp({ databaseUrl: viaProxy.toString() });
    try {
      const admin = await loginAdmin(testApp.app);
      const profile = () => testApp.app.inject({ method: 'GET', url: '/api/users/profile', headers: admin.auth });
      assert.equal((await profile()).statusCode, 200);

      await proxy.stop();
      for (const request of [profile, () => testApp.app.inject({ method: 'GET', url: '/readyz' })]) {
        const started = Date.now();
        const response = await request();
        assert.equal(response.statusCode, 503);
        assert.equal(problemOf(response).code, 'unavailable');
        assert.ok(Date.now() - started < 6000, `answered in ${Date.now() - started} ms`);
      }
      const login = await testApp.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: admin.email, password: admin.password } });
      assert.equal(login.statusCode, 503);

      await proxy.start();
      let recovered = false;
      for (let attempt = 0; attempt < 50 && !recovered; attempt++) {
        recovered = (await profile()).statusCode === 200;
      }
      assert.ok(recovered, 'the service answers again once the database is back');
      assert.equal((await testApp.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
    } finally {
      await testApp.app.close();
      await proxy.stop();
      await scratch.drop();
    }
  });

  it('bounds every statement when the database stalls (packets dropped), and serves again within 10 s after it is back', async () => {
    const { scratch, proxy, viaProxy } = await databaseBehindProxy();
    const testApp = await buildTestApp({ databaseUrl: viaProxy.toString(), environment: { DATABASE_STATEMENT_TIMEOUT: '1000' } });
    try {
      const admin = await loginAdmin(testApp.app);
      const profile = () => testApp.app.inject({ method: 'GET', url: '/api/users/profile', headers: admin.auth });
      assert.equal((await profile()).statusCode, 200);

      proxy.stall();
      const started = Date.now();
      const stalled = await Promise.all(Array.from({ length: 5 }, profile));
      for (const response of stalled) {
        assert.equal(response.statusCode, 503);
        assert.equal(problemOf(response).code, 'unavailable');
      }
      assert.ok(Date.now() - started < 8000, `answered in ${Date.now() - started} ms`);

      proxy.resume();
      const back = Date.now();
      let recovered = false;
      while (!recovered && Date.now() - back < 10_000) {
        recovered = (await profile()).statusCode === 200;
      }
      assert.ok(recovered, 'serves again within 10 s of the database coming back');
      const again = await Promise.all(Array.from({ length: 20 }, profile));
      assert.deepEqual(new Set(again.map((response) => response.statusCode)), new Set([200]), 'no connection stays stuck');
    } finally {
      await testApp.app.close();
      await proxy.stop();
      await scratch.drop();
    }
  });
});
