import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { buildTestApp, createUser, problemOf, useAppWithAdmin } from '../helpers/test-app.js';
import { appSession, bearer, claimsOf, registerClient } from './oauth-helpers.js';

/** API.md section 18: `/oauth/userinfo`, OpenID Connect Core §5.3, with the bearer token of an app. */
describe('/oauth/userinfo', () => {
  const fixture = useAppWithAdmin();
  const userinfo = (token: string, method: 'GET' | 'POST' = 'GET') => fixture.app.inject({ method, url: '/oauth/userinfo', headers: bearer(token) });

  it("answers sub and the claims of the token's scopes, by GET and POST, never to be cached", async () => {
    const app = await registerClient(fixture.app, fixture.admin, 'confidential');
    const customer = await createUser(fixture.app, { name: 'Ada Lovelace' });
    await sql`update users set phone = '+4930123456' where id = ${customer.id}`.execute(fixture.db);
    const user = await fixture.db.selectFrom('users').selectAll().where('id', '=', customer.id).executeTakeFirstOrThrow();
    const updatedAt = Math.floor(user.updated_at.getTime() / 1000);

    const cases: [string[], Record<string, unknown>][] = [
      [['openid'], {}],
      [['openid', 'profile'], { name: 'Ada Lovelace', updated_at: updatedAt }],
      [['openid', 'email'], { email: customer.email, email_verified: false }],
      [['openid', 'phone'], { phone_number: '+4930123456' }],
      [['openid', 'profile', 'email', 'phone', 'account'], { name: 'Ada Lovelace', updated_at: updatedAt, email: customer.email, email_verified: false, phone_number: '+4930123456' }],
    ];
    for (const [scopes, claims] of cases) {
      const { access_token } = await appSession(fixture.db, fixture.testApp.config, customer, app.id, scopes);
      for (const method of ['GET', 'POST'] as const) {
        const reply = await userinfo(access_token, method);
        assert.equal(reply.statusCode, 200, `${method} ${scopes.join(' ')}: ${reply.body}`);
        assert.match(String(reply.headers['content-type']), /^application\/json/);
        assert.equal(reply.headers['cache-control'], 'no-store');
        assert.deepEqual(reply.json(), { sub: customer.id, ...claims }, `${method} ${scopes.join(' ')}`);
      }
    }
  });

  it('gives nothing of a scope the app no longer holds', async () => {
    const app = await registerClient(fixture.app, fixture.admin, 'confidential');
    const customer = await createUser(fixture.app, { name: 'Grace Hopper' });
    const { access_token } = await appSession(fixture.db, fixture.testApp.config, customer, app.id, ['openid', 'profile', 'email']);
    const patched = await fixture.app.inject({ method: 'PATCH', url: `/api/clients/${app.id}`, headers: { ...fixture.admin.auth, 'content-type': 'application/merge-patch+json' }, payload: JSON.stringify({ scopes: ['openid', 'email'] }) });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.deepEqual((await userinfo(access_token)).json(), { sub: customer.id, email: customer.email, email_verified: false });
  });

  it('is 403 insufficient_scope without openid, and for a direct sign-in; 403 forbidden for an API client', async () => {
    const app = await registerClient(fixture.app, fixture.admin, 'confidential');
    const customer = await createUser(fixture.app);
    const challenge = 'Bearer error="insufficient_scope", scope="openid"';

    const { access_token } = await appSession(fixture.db, fixture.testApp.config, customer, app.id, ['profile', 'email', 'account']);
    const withoutOpenid = await userinfo(access_token);
    assert.equal(withoutOpenid.statusCode, 403);
    assert.equal(problemOf(withoutOpenid).code, 'insufficient_scope');
    assert.equal(withoutOpenid.headers['www-authenticate'], challenge);

    const direct = await fixture.app.inject({ method: 'GET', url: '/oauth/userinfo', headers: customer.auth });
    assert.equal(direct.statusCode, 403);
    assert.equal(problemOf(direct).code, 'insufficient_scope');
    assert.equal(direct.headers['www-authenticate'], challenge);

    const service = await registerClient(fixture.app, fixture.admin, 'service');
    const asClient = await fixture.app.inject({ method: 'GET', url: '/oauth/userinfo', headers: bearer(service.secret!) });
    assert.equal(asClient.statusCode, 403);
    assert.equal(problemOf(asClient).code, 'forbidden');

    const none = await fixture.app.inject({ method: 'GET', url: '/oauth/userinfo' });
    assert.equal(none.statusCode, 401);
    assert.equal(problemOf(none).code, 'unauthenticated');
  });

  it('is 401 invalid_token on the very next request once the session ends', async () => {
    const app = await registerClient(fixture.app, fixture.admin, 'confidential');
    const customer = await createUser(fixture.app);
    const { access_token } = await appSession(fixture.db, fixture.testApp.config, customer, app.id, ['openid']);
    assert.equal((await userinfo(access_token)).statusCode, 200);
    const ended = await fixture.app.inject({ method: 'DELETE', url: `/api/auth/sessions/${claimsOf(access_token).sid}`, headers: customer.auth });
    assert.equal(ended.statusCode, 204, ended.body);
    const refused = await userinfo(access_token);
    assert.equal(refused.statusCode, 401);
    assert.equal(problemOf(refused).code, 'invalid_token');
    assert.equal(refused.headers['www-authenticate'], 'Bearer error="invalid_token"');
  });

  it('opens nothing else: openid, profile, email and phone are 403 insufficient_scope on an own route', async () => {
    const app = await registerClient(fixture.app, fixture.admin, 'confidential');
    const customer = await createUser(fixture.app);
    const { access_token } = await appSession(fixture.db, fixture.testApp.config, customer, app.id, ['openid', 'profile', 'email', 'phone', 'offline_access']);
    for (const url of ['/api/users/profile', '/api/auth/sessions', `/api/users/${customer.id}`, '/api/variants']) {
      const reply = await fixture.app.inject({ method: 'GET', url, headers: bearer(access_token) });
      assert.equal(reply.statusCode, 403, url);
      assert.equal(problemOf(reply).code, 'insufficient_scope', url);
    }
  });
});

describe('/oauth/userinfo, /oauth/revoke and /oauth/introspect without an https issuer', () => {
  it('are unknown routes (404 not_found); the consents of section 18 stay on', async () => {
    const testApp = await buildTestApp({ environment: { JWT_ISSUER: 'http://shop.example' } });
    try {
      assert.equal(testApp.config.authorizationServer, false);
      for (const [method, url] of [['GET', '/oauth/userinfo'], ['POST', '/oauth/userinfo'], ['POST', '/oauth/revoke'], ['POST', '/oauth/introspect']] as const) {
        const reply = await testApp.app.inject({ method, url, headers: { authorization: 'Bearer whatever' } });
        assert.equal(reply.statusCode, 404, `${method} ${url}`);
        assert.equal(problemOf(reply).code, 'not_found', `${method} ${url}`);
      }
      const customer = await createUser(testApp.app);
      const consents = await testApp.app.inject({ method: 'GET', url: '/api/users/profile/apps', headers: customer.auth });
      assert.equal(consents.statusCode, 200, consents.body);
      assert.deepEqual(consents.json(), { items: [] });
    } finally {
      await testApp.close();
    }
  });
});
