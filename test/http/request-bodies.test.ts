import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp, createUser, newVariantBody, problemOf, useAppWithAdmin } from '../helpers/test-app.js';

/** API.md section 10, "Bodiless operations", and which media types a body may have. */
describe('request bodies', () => {
  const fixture = useAppWithAdmin();

  it('accepts no body, an empty one whatever its Content-Type, or {} on an operation without a body; refuses any other', async () => {
    const { app, admin } = fixture;
    const variant = (await app.inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: newVariantBody(100) })).json();
    const reserve = async () => (await app.inject({ method: 'POST', url: '/api/reservations', headers: admin.auth, payload: { lines: [{ variant_id: variant.id, quantity: 1 }] } })).json().id;
    const commit = (id: string, headers: Record<string, string>, payload?: string) =>
      app.inject({ method: 'POST', url: `/api/reservations/${id}/commit`, headers: { ...admin.auth, ...headers }, ...(payload === undefined ? {} : { payload }) });
    for (const [headers, payload] of [
      [{}, undefined],
      [{ 'content-type': 'application/json' }, ''],
      [{ 'content-type': 'text/plain' }, ''],
      [{ 'content-type': 'application/x-www-form-urlencoded' }, ''],
      [{ 'content-type': 'application/json' }, '{}'],
    ] as const) {
      const answered = await commit(await reserve(), headers, payload);
      assert.equal(answered.statusCode, 200, `${JSON.stringify(headers)} ${JSON.stringify(payload)}: ${answered.body}`);
    }
    for (const [headers, payload, code] of [
      [{ 'content-type': 'application/json' }, '{"force":true}', 'validation_failed'],
      [{ 'content-type': 'application/json' }, '[]', 'validation_failed'],
      [{ 'content-type': 'application/json' }, 'null', 'validation_failed'],
      [{ 'content-type': 'application/json' }, '{oops', 'malformed_json'],
      [{ 'content-type': 'text/plain' }, 'commit please', 'malformed_json'],
    ] as const) {
      const id = await reserve();
      const refused = await commit(id, headers, payload);
      assert.equal(refused.statusCode, 400, `${payload}`);
      assert.equal(problemOf(refused).code, code, `${payload}`);
      const stored = await app.inject({ method: 'GET', url: `/api/reservations/${id}`, headers: admin.auth });
      assert.equal(stored.json().status, 'active', 'a refused commit changed nothing');
    }
    // The same rules for every GET and for a DELETE, and for the verification resend.
    const profile = (headers: Record<string, string>, payload: string) => app.inject({ method: 'GET', url: '/api/users/profile', headers: { ...admin.auth, ...headers }, payload });
    assert.equal((await profile({ 'content-type': 'application/json' }, '')).statusCode, 200);
    assert.equal((await profile({ 'content-type': 'application/json' }, '{}')).statusCode, 200);
    assert.equal(problemOf(await profile({ 'content-type': 'application/json' }, '{"a":1}')).code, 'validation_failed');
    assert.equal(problemOf(await profile({ 'content-type': 'text/plain' }, 'hello')).code, 'malformed_json');
    const user = await createUser(app);
    const resend = await app.inject({ method: 'POST', url: '/api/auth/verify-email/resend', headers: { ...user.auth, 'content-type': 'application/json' }, payload: '' });
    assert.equal(resend.statusCode, 202);
    const deleted = await app.inject({ method: 'DELETE', url: `/api/variants/${variant.id}`, headers: { ...admin.auth, 'content-type': 'application/json' }, payload: '' });
    assert.equal(deleted.statusCode, 409, 'reached the operation (its reservations are committed, the rest active)');
  });

  it('takes application/merge-patch+json on a PATCH only: a PUT sending it is 415', async () => {
    const { app, admin } = fixture;
    const put = await app.inject({ method: 'PUT', url: '/api/users/profile', headers: { ...admin.auth, 'content-type': 'application/merge-patch+json' }, payload: JSON.stringify({ name: 'A', email: admin.email }) });
    assert.equal(put.statusCode, 415);
    assert.equal(problemOf(put).code, 'unsupported_media_type');
    const patch = await app.inject({ method: 'PATCH', url: '/api/users/profile', headers: { ...admin.auth, 'content-type': 'application/merge-patch+json' }, payload: JSON.stringify({ name: 'Admin' }) });
    assert.equal(patch.statusCode, 200);
    const plain = await app.inject({ method: 'PUT', url: '/api/users/profile', headers: { ...admin.auth, 'content-type': 'text/plain' }, payload: 'x' });
    assert.equal(plain.statusCode, 415);
  });

  it('answers a malformed cursor with 400 invalid_parameter on every list', async () => {
    const { app, admin } = fixture;
    for (const url of ['/api/users', '/api/variants', '/api/events', '/api/webhooks', '/api/reservations', '/api/variants/product/p-1']) {
      const refused = await app.inject({ method: 'GET', url: `${url}?cursor=$$not-a-cursor$$`, headers: admin.auth });
      assert.equal(refused.statusCode, 400, url);
      assert.equal(problemOf(refused).code, 'invalid_parameter', url);
    }
    const mixed = await app.inject({ method: 'GET', url: '/api/users?cursor=$$bad$$&limit=0', headers: admin.auth });
    assert.equal(problemOf(mixed).code, 'validation_failed', 'with other problems it lists them all');
  });
});

describe('pages served to browsers', () => {
  it('sends upgrade-insecure-requests on /docs over https only, and 404 for a missing console file', async () => {
    const testApp = await buildTestApp({ environment: { TRUST_PROXY: 'true' } });
    try {
      const plain = await testApp.app.inject({ method: 'GET', url: '/docs' });
      assert.equal(plain.statusCode, 200);
      assert.match(String(plain.headers['content-security-policy']), /script-src 'self'/);
      assert.doesNotMatch(String(plain.headers['content-security-policy']), /upgrade-insecure-requests/);
      const secure = await testApp.app.inject({ method: 'GET', url: '/docs', headers: { 'x-forwarded-proto': 'https' } });
      assert.match(String(secure.headers['content-security-policy']), /upgrade-insecure-requests/);
      const missing = await testApp.app.inject({ method: 'GET', url: '/admin/favicon.ico' });
      assert.equal(missing.statusCode, 404);
      assert.equal(problemOf(missing).code, 'not_found');
      const console = await testApp.app.inject({ method: 'GET', url: '/admin/' });
      assert.match(console.body, /rel="icon"[^>]+href="\/admin\/favicon\.svg"/);
      assert.equal((await testApp.app.inject({ method: 'GET', url: '/admin/favicon.svg' })).statusCode, 200);
      assert.equal((await testApp.app.inject({ method: 'POST', url: '/admin/favicon.svg' })).statusCode, 405);
    } finally {
      await testApp.close();
    }
  });
});
