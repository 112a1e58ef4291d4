import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { AddressInfo } from 'node:net';
import { decodeJwt, forgeJwt } from '../helpers/jwt.js';
import { parseRawReply, rawRequest } from '../helpers/raw-http.js';
import {
  JWT_SECRET,
  buildTestApp,
  createUser,
  loginAdmin,
  problemOf,
  uniqueEmail,
  type Session,
  type TestApp,
} from '../helpers/test-app.js';

const cursorOf = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('hardening: bad input never reaches the database', () => {
  let testApp: TestApp;
  let admin: Session;
  before(async () => {
    testApp = await buildTestApp();
    admin = await loginAdmin(testApp.app);
  });
  after(() => testApp.close());

  it('refuses a NUL character in any string of a body, query or path with 400', async () => {
    const { app } = testApp;
    const variantId = randomUUID();
    const cases = [
      { method: 'POST', url: '/api/auth/login', payload: { email: 'a\u0000@x.y', password: 'x' }, path: '/email' },
      { method: 'POST', url: '/api/auth/register', payload: { email: uniqueEmail(), password: 'password-123', name: 'A\u0000' }, path: '/name' },
      { method: 'POST', url: '/api/auth/register', payload: { email: uniqueEmail(), password: 'password-123', name: 'A', phone: '1\u0000' }, path: '/phone' },
      { method: 'PUT', url: '/api/users/profile', headers: admin.auth, payload: { name: 'B\u0000', email: admin.email }, path: '/name' },
      { method: 'PUT', url: `/api/users/${admin.id}/balance`, headers: admin.auth, payload: { delta: 1, reason: 'r\u0000' }, path: '/reason' },
      {
        method: 'POST',
        url: `/api/variants/${variantId}`,
        headers: admin.auth,
        payload: { product_id: 'p-1', sku: 'NUL-1', name: 'n', price: 1, attributes: { 'si\u0000ze': 'M' } },
        path: '/attributes/si\u0000ze',
      },
      {
        method: 'POST',
        url: `/api/variants/${variantId}`,
        headers: admin.auth,
        payload: { product_id: 'p-1', sku: 'NUL-2', name: 'n', price: 1, attributes: { size: 'M\u0000' } },
        path: '/attributes/size',
      },
      { method: 'GET', url: '/api/users?q=%00', headers: admin.auth, path: '/q' },
    ] as const;
    for (const { path, ...request } of cases) {
      const response = await app.inject(request);
      assert.equal(response.statusCode, 400, `${request.url} ${response.body}`);
      const problem = problemOf(response);
      assert.equal(problem.code, 'validation_failed');
      assert.deepEqual(problem.errors?.map((error) => error.path), [path]);
    }
    const inPath = await app.inject({ method: 'GET', url: '/api/variants/sku/A%00B', headers: admin.auth });
    assert.equal(inPath.statusCode, 400);
    assert.equal(problemOf(inPath).code, 'invalid_parameter');
  });

  it('refuses a cursor that decodes to an impossible position, or is too long, with 400 invalid_parameter', async () => {
    const { app } = testApp;
    const impossible = cursorOf(['-271821-04-20T00:00:00.000Z', randomUUID()]);
    const lists = ['/api/users', `/api/users/${admin.id}/balance/ledger`, '/api/variants/product/p-1'];
    for (const list of lists) {
      for (const cursor of [impossible, cursorOf(['+275760-09-13T00:00:00.000Z', randomUUID()]), 'A'.repeat(4000)]) {
        const response = await app.inject({ method: 'GET', url: `${list}?cursor=${cursor}`, headers: admin.auth });
        assert.equal(response.statusCode, 400, `${list} ${response.body}`);
        assert.equal(problemOf(response).code, 'invalid_parameter');
      }
    }
  });

  it('refuses tokens without iss or aud, issued in the future, or naming a non-UUID subject, with 401 invalid_token', async () => {
    const { app } = testApp;
    const now = Math.floor(Date.now() / 1000);
    const claims = { sub: admin.id, sid: decodeJwt(admin.accessToken).payload.sid, jti: randomUUID(), iat: now, exp: now + 600, iss: testApp.config.jwtIssuer, aud: 'shop-accounts-api' };
    const header = { alg: 'HS256', typ: 'at+jwt' };
    const accepted = forgeJwt(header, claims, JWT_SECRET);
    assert.equal((await app.inject({ method: 'GET', url: '/api/users/profile', headers: { authorization: `Bearer ${accepted}` } })).statusCode, 200);
    const { iss: _iss, ...withoutIss } = claims;
    const { aud: _aud, ...withoutAud } = claims;
    const forged = [
      withoutIss,
      withoutAud,
      { ...claims, iat: now + 3600 },
      { ...claims, sub: 'not-a-uuid' },
      { ...claims, sub: admin.id.toUpperCase() },
    ];
    for (const payload of forged) {
      const token = forgeJwt(header, payload, JWT_SECRET);
      const response = await app.inject({ method: 'GET', url: '/api/users/profile', headers: { authorization: `Bearer ${token}` } });
      assert.equal(response.statusCode, 401, JSON.stringify(payload));
      assert.equal(problemOf(response).code, 'invalid_token');
    }
  });

  it('sends Cache-Control: no-store with every reply that carries a token', async () => {
    const { app } = testApp;
    const user = await createUser(app);
    const login = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: user.email, password: user.password } });
    assert.equal(login.headers['cache-control'], 'no-store');
    const refresh = await app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: login.json().refresh_token } });
    assert.equal(refresh.statusCode, 200);
    assert.equal(refresh.headers['cache-control'], 'no-store');
    const change = await app.inject({
      method: 'PUT',
      url: '/api/users/change-password',
      headers: { authorization: `Bearer ${refresh.json().access_token}` },
      payload: { current_password: user.password, new_password: 'another-password-1' },
    });
    assert.equal(change.statusCode, 200);
    assert.equal(change.headers['cache-control'], 'no-store');
  });

  it("keeps a caller's replies out of every cache (no-store), so a browser never shows them to the next person signed in", async () => {
    const { app } = testApp;
    const [first, second] = [await createUser(app), await createUser(app)];
    const profiles = [];
    for (const user of [first, second]) {
      const profile = await app.inject({ method: 'GET', url: '/api/users/profile', headers: user.auth });
      assert.equal(profile.statusCode, 200);
      assert.equal(profile.headers['cache-control'], 'no-store');
      profiles.push(profile);
    }
    // Both profiles are at version 1: by URL and ETag alone, a cache would take one for the other.
    assert.deepEqual(profiles.map((profile) => profile.headers.etag), ['"1"', '"1"']);
    const conditional = await app.inject({ method: 'GET', url: '/api/users/profile', headers: { ...first.auth, 'if-none-match': '"1"' } });
    assert.equal(conditional.statusCode, 304, "a client's own conditional request still works");
    const anonymous = await app.inject({ method: 'GET', url: '/healthz' });
    assert.equal(anonymous.headers['cache-control'], undefined, 'a reply to nobody in particular stays as it was');
  });

  it('ends every session on suspension: after reactivation old access and refresh tokens are 401', async () => {
    const { app } = testApp;
    const user = await createUser(app);
    const suspend = await app.inject({ method: 'PUT', url: `/api/users/${user.id}/status`, headers: admin.auth, payload: { status: 'suspended' } });
    assert.equal(suspend.statusCode, 200);
    const whileSuspended = await app.inject({ method: 'GET', url: '/api/users/profile', headers: user.auth });
    assert.equal(problemOf(whileSuspended).code, 'account_suspended');
    const refreshWhileSuspended = await app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: user.refreshToken } });
    assert.equal(problemOf(refreshWhileSuspended).code, 'account_suspended');
    const reactivate = await app.inject({ method: 'PUT', url: `/api/users/${user.id}/status`, headers: admin.auth, payload: { status: 'active' } });
    assert.equal(reactivate.statusCode, 200);
    const oldAccess = await app.inject({ method: 'GET', url: '/api/users/profile', headers: user.auth });
    assert.equal(oldAccess.statusCode, 401);
    assert.equal(problemOf(oldAccess).code, 'invalid_token');
    const oldRefresh = await app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: user.refreshToken } });
    assert.equal(oldRefresh.statusCode, 401);
    assert.equal(problemOf(oldRefresh).code, 'invalid_token');
    const fresh = await app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: user.email, password: user.password } });
    assert.equal(fresh.statusCode, 200, 'the user signs in again after reactivation');
  });

  it('routes literal segments and unknown methods exactly', async () => {
    const { app } = testApp;
    const deeper = await app.inject({ method: 'PUT', url: '/api/users/profile/role', headers: admin.auth, payload: { role: 'user' } });
    assert.equal(deeper.statusCode, 404);
    assert.equal(problemOf(deeper).code, 'not_found');
    const options = await app.inject({ method: 'OPTIONS', url: '/api/users/change-password' });
    assert.equal(options.statusCode, 405);
    assert.equal(options.headers.allow, 'PUT');
    const profile = await app.inject({ method: 'POST', url: '/api/users/profile', headers: admin.auth, payload: {} });
    assert.equal(profile.statusCode, 405);
    assert.deepEqual(String(profile.headers.allow).split(', ').sort(), ['DELETE', 'GET', 'HEAD', 'PATCH', 'PUT']);
    // An unknown method with a body of any media type is still 405, not 415.
    const csv = await app.inject({ method: 'PUT', url: '/api/variants/imports', headers: { ...admin.auth, 'content-type': 'text/csv' }, payload: 'sku\nA\n' });
    assert.equal(csv.statusCode, 405);
    assert.deepEqual(String(csv.headers.allow).split(', ').sort(), ['GET', 'HEAD', 'POST']);
  });
});

describe('hardening: errors raised before routing are problem+json', () => {
  let testApp: TestApp;
  let port: number;
  before(async () => {
    testApp = await buildTestApp({ environment: { REQUEST_TIMEOUT: '1000' } });
    await testApp.app.listen({ port: 0, host: '127.0.0.1' });
    port = (testApp.app.server.address() as AddressInfo).port;
  });
  after(() => testApp.close());

  const expectProblem = (reply: string, status: number, code: string) => {
    const parsed = parseRawReply(reply);
    assert.equal(parsed.status, status, reply);
    assert.match(parsed.headers['content-type'] ?? '', /^application\/problem\+json/);
    assert.ok(parsed.headers['x-request-id'], 'carries X-Request-Id');
    const body = JSON.parse(parsed.body);
    assert.equal(body.code, code);
    assert.equal(body.status, status);
    assert.equal(typeof body.detail, 'string');
  };

  it('answers a header block over 16 KiB with 431 headers_too_large', async () => {
    const reply = await rawRequest(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`);
    expectProblem(reply, 431, 'headers_too_large');
  });

  it('answers a bare CR and an unknown method token with 400 malformed_request', async () => {
    expectProblem(await rawRequest(port, 'GET /healthz HTTP/1.1\rHost: x\r\n\r\n'), 400, 'malformed_request');
    expectProblem(await rawRequest(port, 'FOO /healthz HTTP/1.1\r\nHost: x\r\n\r\n'), 400, 'malformed_request');
  });

  it('answers a method the path does not serve with 405 and its exact Allow', async () => {
    for (const method of ['QUERY', 'PATCH']) {
      const reply = parseRawReply(await rawRequest(port, `${method} /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`));
      assert.equal(reply.status, 405, method);
      assert.equal(reply.headers.allow, 'GET, HEAD');
      assert.equal(JSON.parse(reply.body).code, 'method_not_allowed');
    }
  });

  it('answers a body that does not arrive within REQUEST_TIMEOUT with 408 request_timeout', async () => {
    const started = Date.now();
    const reply = await rawRequest(
      port,
      'POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"em',
      { keepOpenMs: 10_000 },
    );
    expectProblem(reply, 408, 'request_timeout');
    assert.ok(Date.now() - started < 5000, `answered after ${Date.now() - started} ms`);
  });
});

describe('hardening: logs', () => {
  it('never logs the value of a query parameter that may hold a token', async () => {
    const logLines: string[] = [];
    const testApp = await buildTestApp({ logLines });
    try {
      await testApp.app.inject({ method: 'GET', url: '/api/users/profile?access_token=secret-token-value&limit=5' });
      const logged = logLines.join('\n');
      assert.match(logged, /access_token=\[redacted\]/);
      assert.match(logged, /limit=5/);
      assert.doesNotMatch(logged, /secret-token-value/);
    } finally {
      await testApp.close();
    }
  });
});
