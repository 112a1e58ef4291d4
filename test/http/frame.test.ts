import assert from 'node:assert/strict';
import pg from 'pg';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, loginAdmin, problemOf, type Session, type TestApp } from '../helpers/test-app.js';

describe('HTTP frame', () => {
  let testApp: TestApp;
  let admin: Session;

  before(async () => {
    testApp = await buildTestApp();
    admin = await loginAdmin(testApp.app);
  });
  after(() => testApp.close());

  it('answers an unknown path with 404 not_found, with or without a token', async () => {
    for (const headers of [{}, admin.auth, { authorization: 'Bearer nonsense' }]) {
      const response = await testApp.app.inject({ method: 'GET', url: '/api/nothing-here', headers });
      assert.equal(response.statusCode, 404);
      assert.equal(problemOf(response).code, 'not_found');
    }
  });

  it('answers a known path with another method with 405 and Allow', async () => {
    const response = await testApp.app.inject({ method: 'PATCH', url: '/api/users', headers: admin.auth });
    assert.equal(response.statusCode, 405);
    assert.equal(problemOf(response).code, 'method_not_allowed');
    assert.match(String(response.headers.allow), /GET/);
    // API.md section 13: the profile's Allow gains DELETE (self-deletion).
    const profilePost = await testApp.app.inject({ method: 'POST', url: '/api/users/profile', headers: admin.auth });
    assert.equal(profilePost.statusCode, 405);
    assert.deepEqual(String(profilePost.headers.allow).split(', ').sort(), ['DELETE', 'GET', 'HEAD', 'PATCH', 'PUT']);
    const changePasswordGet = await testApp.app.inject({ method: 'GET', url: '/api/users/change-password', headers: admin.auth });
    assert.equal(changePasswordGet.statusCode, 405);
    assert.equal(changePasswordGet.headers.allow, 'PUT');
  });

  it('keeps literal segments from being read as an id', async () => {
    for (const url of ['/api/variants/product', '/api/variants/sku', '/api/variants/sku/', '/api/variants/product/']) {
      const response = await testApp.app.inject({ method: 'GET', url, headers: admin.auth });
      assert.equal(response.statusCode, 404, url);
      assert.equal(problemOf(response).code, 'not_found');
    }
  });

  it('refuses a body that is not JSON with 400 malformed_json', async () => {
    for (const payload of ['{"name": ', 'not json', '{"__proto__": {"x": 1}}']) {
      const response = await testApp.app.inject({
        method: 'PUT',
        url: '/api/users/profile',
        headers: { ...admin.auth, 'content-type': 'application/json' },
        payload,
      });
      assert.equal(response.statusCode, 400, payload);
      assert.equal(problemOf(response).code, 'malformed_json');
    }
  });

  it('refuses a body over 64 KiB with 413 payload_too_large', async () => {
    const response = await testApp.app.inject({
      method: 'PUT',
      url: '/api/users/profile',
      headers: admin.auth,
      payload: { name: 'x'.repeat(70 * 1024), email: 'a@example.com' },
    });
    assert.equal(response.statusCode, 413);
    assert.equal(problemOf(response).code, 'payload_too_large');
  });

  it('refuses a body that is not application/json with 415', async () => {
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const response = await testApp.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        headers: { 'content-type': contentType },
        payload: 'email=a&password=b',
      });
      assert.equal(response.statusCode, 415, contentType);
      assert.equal(problemOf(response).code, 'unsupported_media_type');
    }
  });

  it('answers a non-UUID id with 400 invalid_parameter, however long', async () => {
    for (const id of ['abc', '1234', 'x'.repeat(5000), "1' or 1=1 --", '00000000-0000-0000-0000-00000000000g']) {
      const response = await testApp.app.inject({ method: 'GET', url: `/api/users/${encodeURIComponent(id)}`, headers: admin.auth });
      assert.equal(response.statusCode, 400, id.slice(0, 20));
      assert.equal(problemOf(response).code, 'invalid_parameter');
    }
  });

  it('answers a malformed percent-encoding in the path with 400 invalid_parameter', async () => {
    const response = await testApp.app.inject({ method: 'GET', url: '/api/variants/sku/%E0%A4%A', headers: admin.auth });
    assert.equal(response.statusCode, 400);
    assert.equal(problemOf(response).code, 'invalid_parameter');
    assert.ok(response.headers['x-request-id']);
  });

  it('refuses unknown body fields, wrong types and bounds with 400 validation_failed and field paths', async () => {
    const unknown = await testApp.app.inject({
      method: 'PUT',
      url: '/api/users/profile',
      headers: admin.auth,
      payload: { name: 'A', email: 'a@example.com', balance: 5 },
    });
    assert.equal(unknown.statusCode, 400);
    const problem = problemOf(unknown);
    assert.equal(problem.code, 'validation_failed');
    assert.deepEqual(problem.errors?.map((error) => error.path), ['/balance']);

    const wrongType = await testApp.app.inject({
      method: 'PUT',
      url: '/api/users/profile',
      headers: admin.auth,
      payload: { name: 42, email: 'a@example.com' },
    });
    assert.equal(wrongType.statusCode, 400);
    assert.equal(problemOf(wrongType).errors?.[0]?.path, '/name');

    const badLimit = await testApp.app.inject({ method: 'GET', url: '/api/users?limit=101', headers: admin.auth });
    assert.equal(badLimit.statusCode, 400);
    assert.equal(problemOf(badLimit).code, 'validation_failed');
  });

  it('echoes a sent X-Request-Id and generates one otherwise', async () => {
    const echoed = await testApp.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'trace-123' } });
    assert.equal(echoed.headers['x-request-id'], 'trace-123');
    const generated = await testApp.app.inject({ method: 'GET', url: '/api/unknown' });
    assert.match(String(generated.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  });

  it('serves health, readiness, the OpenAPI document and the docs page without a token', async () => {
    assert.equal((await testApp.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    const ready = await testApp.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(ready.statusCode, 200);
    const docs = await testApp.app.inject({ method: 'GET', url: '/docs' });
    assert.equal(docs.statusCode, 200);
    assert.match(docs.body, /<title>Shop accounts API<\/title>/);
    // It opens on what the service is and how to make a first call, not on a wall of rules.
    const { description } = (await testApp.app.inject({ method: 'GET', url: '/openapi.json' })).json().info;
    assert.match(description, /^The accounts and catalogue back end of an online shop/);
    assert.ok(description.indexOf('**First call.**') < description.indexOf('**Conventions every operation shares**'));
    assert.match(description, /\/api\/auth\/login/);
  });

  it('documents every route of the contract in OpenAPI 3.1, with its error replies', async () => {
    const response = await testApp.app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(response.statusCode, 200);
    const document = response.json();
    assert.equal(document.openapi, '3.1.0');
    const expected: Record<string, string[]> = {
      '/api/auth/register': ['post'],
      '/api/auth/login': ['post'],
      '/api/auth/refresh': ['post'],
      '/api/auth/logout': ['post'],
      '/api/users/profile': ['get', 'put'],
      '/api/users/change-password': ['put'],
      '/api/users': ['get'],
      '/api/users/{id}': ['get', 'delete'],
      '/api/users/{id}/role': ['put'],
      '/api/users/{id}/status': ['put'],
      '/api/users/{id}/balance': ['put'],
      '/api/users/{id}/balance/ledger': ['get'],
      '/api/variants/product/{product_id}': ['get'],
      '/api/variants/sku/{sku}': ['get'],
      '/api/variants/{id}': ['get', 'post', 'put', 'delete'],
      '/healthz': ['get'],
      '/readyz': ['get'],
    };
    for (const [path, methods] of Object.entries(expected)) {
      for (const method of methods) {
        const operation = document.paths[path]?.[method];
        assert.ok(operation, `${method.toUpperCase()} ${path} is documented`);
        if (path === '/healthz') continue;
        const errorStatuses = Object.keys(operation.responses).filter((status) => Number(status) >= 400);
        assert.ok(errorStatuses.includes('500'), `${method} ${path} documents its errors`);
      }
    }
    assert.ok(document.components.schemas.Problem);
  });

  it('never shows a stack trace or SQL to a client', async () => {
    const response = await testApp.app.inject({
      method: 'GET',
      url: `/api/variants/sku/${'a'.repeat(65)}`,
      headers: admin.auth,
    });
    assert.equal(response.statusCode, 400);
    assert.doesNotMatch(response.body, /at .*\.ts|select|postgres/i);
  });
});

describe('readiness without a database', () => {
  it('answers 503 unavailable from /readyz and API routes when the database is gone', async () => {
    const testApp = await buildTestApp();
    const admin = await loginAdmin(testApp.app);
    await testApp.db.destroy();
    const ready = await testApp.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(ready.statusCode, 503);
    assert.equal(problemOf(ready).code, 'unavailable');
    await testApp.close().catch(() => {});
    assert.ok(admin.id);
    if (testApp.databaseUrl) {
      const name = new URL(testApp.databaseUrl).pathname.slice(1);
      const server = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await server.connect();
      const left = await server.query('select 1 from pg_database where datname = $1', [name]);
      await server.end();
      assert.equal(left.rowCount, 0, `the scratch database ${name} was dropped`);
    }
  });
});
