import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createUser, useAppWithAdmin } from '../helpers/test-app.js';
import { appSession, basic, claimsOf, postForm, registerClient } from './oauth-helpers.js';

/** API.md section 18: `POST /oauth/introspect`, RFC 7662, for confidential apps and service clients. */
describe('POST /oauth/introspect', () => {
  const fixture = useAppWithAdmin();
  const introspect = (form: Record<string, string>, headers: Record<string, string> = {}) => postForm(fixture.app, '/oauth/introspect', form, headers);
  const answer = async (reply: Awaited<ReturnType<typeof introspect>>) => {
    assert.equal(reply.statusCode, 200, reply.body);
    assert.match(String(reply.headers['content-type']), /^application\/json/);
    assert.equal(reply.headers['cache-control'], 'no-store');
    return reply.json() as Record<string, unknown>;
  };

  it("tells an app its live access and refresh tokens, and inactive once the session ended", async () => {
    const app = await registerClient(fixture.app, fixture.admin, 'confidential');
    const customer = await createUser(fixture.app);
    const pair = await appSession(fixture.db, fixture.testApp.config, customer, app.id, ['openid', 'email', 'offline_access']);
    const claims = claimsOf(pair.access_token);
    const auth = basic(app.id, app.secret!);

    assert.deepEqual(await answer(await introspect({ token: pair.access_token }, auth)), {
      active: true,
      token_type: 'access_token',
      sub: customer.id,
      client_id: app.id,
      scope: 'openid email offline_access',
      exp: claims.exp,
      iat: claims.iat,
      sid: claims.sid,
      iss: fixture.testApp.config.jwtIssuer,
    });
    const refresh = await answer(await introspect({ token: pair.refresh_token, token_type_hint: 'refresh_token', client_id: app.id, client_secret: app.secret! }));
    const stored = await fixture.db.selectFrom('refresh_tokens').select(['created_at', 'expires_at']).where('family_id', '=', claims.sid).executeTakeFirstOrThrow();
    assert.deepEqual(refresh, {
      active: true,
      token_type: 'refresh_token',
      sub: customer.id,
      client_id: app.id,
      scope: 'openid email offline_access',
      exp: Math.floor(stored.expires_at.getTime() / 1000),
      iat: Math.floor(stored.created_at.getTime() / 1000),
      sid: claims.sid,
      iss: fixture.testApp.config.jwtIssuer,
    });

    const ended = await fixture.app.inject({ method: 'DELETE', url: `/api/auth/sessions/${claims.sid}`, headers: customer.auth });
    assert.equal(ended.statusCode, 204);
    assert.deepEqual(await answer(await introspect({ token: pair.access_token }, auth)), { active: false });
    assert.deepEqual(await answer(await introspect({ token: pair.refresh_token }, auth)), { active: false });
  });

  it("is inactive for another app's tokens, a direct sign-in's, an unknown or forged one, and the app's tokens once it is disabled", async () => {
    const app = await registerClient(fixture.app, fixture.admin, 'confidential');
    const other = await registerClient(fixture.app, fixture.admin, 'confidential');
    const customer = await createUser(fixture.app);
    const othersPair = await appSession(fixture.db, fixture.testApp.config, customer, other.id, ['openid']);
    const auth = basic(app.id, app.secret!);
    const [header, payload] = othersPair.access_token.split('.');
    for (const token of [othersPair.access_token, othersPair.refresh_token, customer.accessToken, customer.refreshToken, 'no-such-token', `${header}.${payload}.forged`]) {
      assert.deepEqual(await answer(await introspect({ token }, auth)), { active: false }, token);
    }
    // The other app sees them active: nothing was spent by asking.
    assert.equal((await answer(await introspect({ token: othersPair.access_token }, basic(other.id, other.secret!)))).active, true);

    const disabled = await fixture.app.inject({ method: 'PATCH', url: `/api/clients/${other.id}`, headers: { ...fixture.admin.auth, 'content-type': 'application/merge-patch+json' }, payload: JSON.stringify({ status: 'disabled' }) });
    assert.equal(disabled.statusCode, 200);
    const service = await registerClient(fixture.app, fixture.admin, 'service', ['users:read']);
    assert.deepEqual(await answer(await introspect({ token: othersPair.access_token }, basic(service.id, service.secret!))), { active: false }, "a disabled app's token");
  });

  it("tells a service client every app's access tokens, whatever its scopes, but no refresh token", async () => {
    const app = await registerClient(fixture.app, fixture.admin, 'public');
    const customer = await createUser(fixture.app);
    const pair = await appSession(fixture.db, fixture.testApp.config, customer, app.id, ['openid', 'account']);
    const reader = await registerClient(fixture.app, fixture.admin, 'service', ['users:read']);
    const told = await answer(await introspect({ token: pair.access_token }, basic(reader.id, reader.secret!)));
    assert.equal(told.active, true);
    assert.equal(told.client_id, app.id);
    assert.equal(told.sub, customer.id);
    assert.deepEqual(await answer(await introspect({ token: pair.refresh_token }, basic(reader.id, reader.secret!))), { active: false });

    const other = await registerClient(fixture.app, fixture.admin, 'service', ['variants:read']);
    const answered = await introspect({ token: pair.access_token }, basic(other.id, other.secret!));
    assert.equal(answered.statusCode, 200, answered.body);
    assert.equal(answered.headers['cache-control'], 'no-store');
    assert.equal(answered.json().active, true);
  });

  it('is 401 invalid_client to a public app, without authentication, or with a wrong secret', async () => {
    const app = await registerClient(fixture.app, fixture.admin, 'public');
    const confidential = await registerClient(fixture.app, fixture.admin, 'confidential');
    const customer = await createUser(fixture.app);
    const pair = await appSession(fixture.db, fixture.testApp.config, customer, app.id, ['openid']);
    for (const [what, form, headers] of [
      ['a public app', { token: pair.access_token, client_id: app.id }, {}],
      ['a public app by Basic', { token: pair.access_token }, basic(app.id, '')],
      ['no client', { token: pair.access_token }, {}],
      ['a confidential app without its secret', { token: pair.access_token, client_id: confidential.id }, {}],
      ['a wrong secret', { token: pair.access_token, client_id: confidential.id, client_secret: `shop_sk_${'B'.repeat(43)}` }, {}],
    ] as const) {
      const reply = await introspect(form, headers);
      assert.equal(reply.statusCode, 401, `${what}: ${reply.body}`);
      assert.equal(reply.json().error, 'invalid_client', what);
    }
    const missing = await introspect({}, basic(confidential.id, confidential.secret!));
    assert.equal(missing.statusCode, 400);
    assert.equal(missing.json().error, 'invalid_request');
  });
});
