import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createUser, problemOf, useAppWithAdmin } from '../helpers/test-app.js';
import { appSession, basic, bearer, claimsOf, postForm, registerClient } from './oauth-helpers.js';

/** API.md section 18: `POST /oauth/revoke`, RFC 7009, for the tokens of the authenticating app. */
describe('POST /oauth/revoke', () => {
  const fixture = useAppWithAdmin();
  const profile = (token: string) => fixture.app.inject({ method: 'GET', url: '/api/users/profile', headers: bearer(token) });
  const revoke = (form: Record<string, string>, headers: Record<string, string> = {}) => postForm(fixture.app, '/oauth/revoke', form, headers);
  const sessionRow = (id: string) => fixture.db.selectFrom('sessions').select(['ended_at', 'client_id']).where('id', '=', id).executeTakeFirstOrThrow();
  const refreshRows = (sessionId: string) => fixture.db.selectFrom('refresh_tokens').select(['revoked_at']).where('family_id', '=', sessionId).execute();
  const endedEvents = (userId: string) =>
    fixture.db.selectFrom('events').select(['data', 'actor_id', 'actor_type']).where('type', '=', 'user.sessions_ended').where('subject_id', '=', userId).execute();

  const assertRevoked = async (reply: Awaited<ReturnType<typeof revoke>>) => {
    assert.equal(reply.statusCode, 200, reply.body);
    assert.equal(reply.body, '');
    assert.equal(reply.headers['cache-control'], 'no-store');
  };

  it("ends the app's session by its refresh token (confidential app, HTTP Basic): the access token is 401 on the next request", async () => {
    const app = await registerClient(fixture.app, fixture.admin, 'confidential');
    const customer = await createUser(fixture.app);
    const pair = await appSession(fixture.db, fixture.testApp.config, customer, app.id, ['openid', 'account', 'offline_access']);
    const { sid } = claimsOf(pair.access_token);
    assert.equal((await profile(pair.access_token)).statusCode, 200);

    await assertRevoked(await revoke({ token: pair.refresh_token, token_type_hint: 'refresh_token' }, basic(app.id, app.secret!)));
    const refused = await profile(pair.access_token);
    assert.equal(refused.statusCode, 401);
    assert.equal(problemOf(refused).code, 'invalid_token');
    assert.notEqual((await sessionRow(sid)).ended_at, null);
    assert.ok((await refreshRows(sid)).every((row) => row.revoked_at !== null));
    const events = await endedEvents(customer.id);
    assert.equal(events.length, 1);
    assert.deepEqual(events[0]!.data, { cause: 'logout', session_ids: [sid] });
    assert.equal(events[0]!.actor_id, app.id);
    assert.equal(events[0]!.actor_type, 'client');

    // Revoking again (an unknown or spent token) is 200 and changes nothing.
    await assertRevoked(await revoke({ token: pair.refresh_token }, basic(app.id, app.secret!)));
    assert.equal((await endedEvents(customer.id)).length, 1);
  });

  it('ends it by its access token too, whatever the hint says (public app, client_id alone)', async () => {
    const app = await registerClient(fixture.app, fixture.admin, 'public');
    const customer = await createUser(fixture.app);
    const pair = await appSession(fixture.db, fixture.testApp.config, customer, app.id, ['openid', 'account']);
    await assertRevoked(await revoke({ token: pair.access_token, token_type_hint: 'refresh_token', client_id: app.id }));
    assert.equal((await profile(pair.access_token)).statusCode, 401);
    assert.notEqual((await sessionRow(claimsOf(pair.access_token).sid)).ended_at, null);
    assert.ok((await refreshRows(claimsOf(pair.access_token).sid)).every((row) => row.revoked_at !== null));
  });

  it("answers 200 for another app's token, a direct sign-in's, an unknown one, or any a service client sends, and they stay live", async () => {
    const app = await registerClient(fixture.app, fixture.admin, 'confidential');
    const other = await registerClient(fixture.app, fixture.admin, 'confidential');
    const service = await registerClient(fixture.app, fixture.admin, 'service');
    const customer = await createUser(fixture.app);
    const othersPair = await appSession(fixture.db, fixture.testApp.config, customer, other.id, ['openid', 'account']);

    for (const token of [othersPair.refresh_token, othersPair.access_token, customer.refreshToken, customer.accessToken, 'no-such-token']) {
      await assertRevoked(await revoke({ token }, basic(app.id, app.secret!)));
      await assertRevoked(await revoke({ token, client_id: service.id, client_secret: service.secret! }));
    }
    assert.equal((await profile(othersPair.access_token)).statusCode, 200, "the other app's token stays live");
    assert.equal((await profile(customer.accessToken)).statusCode, 200, "the direct sign-in's token stays live");
    assert.equal((await sessionRow(claimsOf(othersPair.access_token).sid)).ended_at, null);
    assert.equal((await endedEvents(customer.id)).length, 0);
  });

  it('refuses a client it cannot authenticate (401 invalid_client) and a bad request (400 invalid_request), in OAuth shape', async () => {
    const app = await registerClient(fixture.app, fixture.admin, 'confidential');
    const customer = await createUser(fixture.app);
    const pair = await appSession(fixture.db, fixture.testApp.config, customer, app.id, ['openid', 'account']);
    const oauthError = (reply: Awaited<ReturnType<typeof revoke>>, status: number, error: string) => {
      assert.equal(reply.statusCode, status, reply.body);
      assert.match(String(reply.headers['content-type']), /^application\/json/);
      assert.equal(reply.headers['cache-control'], 'no-store');
      assert.equal(reply.json().error, error);
      assert.equal(typeof reply.json().error_description, 'string');
      return reply;
    };
    oauthError(await revoke({ token: pair.refresh_token }), 401, 'invalid_client');
    const wrong = oauthError(await revoke({ token: pair.refresh_token }, basic(app.id, `shop_sk_${'A'.repeat(43)}`)), 401, 'invalid_client');
    assert.equal(wrong.headers['www-authenticate'], 'Basic realm="shop-accounts", charset="UTF-8"');
    oauthError(await revoke({ token: pair.refresh_token, client_id: app.id }), 401, 'invalid_client');
    oauthError(await revoke({ client_id: app.id, client_secret: app.secret! }), 400, 'invalid_request');
    oauthError(await revoke({ token: pair.refresh_token, client_id: app.id, client_secret: app.secret! }, basic(app.id, app.secret!)), 400, 'invalid_request');
    const repeated = await fixture.app.inject({
      method: 'POST',
      url: '/oauth/revoke',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...basic(app.id, app.secret!) },
      payload: `token=${pair.refresh_token}&token=${pair.refresh_token}`,
    });
    oauthError(repeated, 400, 'invalid_request');
    const json = await fixture.app.inject({ method: 'POST', url: '/oauth/revoke', headers: basic(app.id, app.secret!), payload: { token: pair.refresh_token } });
    oauthError(json, 400, 'invalid_request');
    assert.equal((await profile(pair.access_token)).statusCode, 200, 'nothing was revoked');
  });

  it("is refused to a disabled app, whose sessions the disabling ended, for good", async () => {
    const app = await registerClient(fixture.app, fixture.admin, 'confidential');
    const customer = await createUser(fixture.app);
    const pair = await appSession(fixture.db, fixture.testApp.config, customer, app.id, ['openid', 'account']);
    const disabled = await fixture.app.inject({ method: 'PATCH', url: `/api/clients/${app.id}`, headers: { ...fixture.admin.auth, 'content-type': 'application/merge-patch+json' }, payload: JSON.stringify({ status: 'disabled' }) });
    assert.equal(disabled.statusCode, 200);
    const reply = await revoke({ token: pair.refresh_token }, basic(app.id, app.secret!));
    assert.equal(reply.statusCode, 401);
    assert.equal(reply.json().error, 'invalid_client');
    assert.notEqual((await sessionRow(claimsOf(pair.access_token).sid)).ended_at, null, 'disabling the app ended its sessions');
    const enabled = await fixture.app.inject({ method: 'PATCH', url: `/api/clients/${app.id}`, headers: { ...fixture.admin.auth, 'content-type': 'application/merge-patch+json' }, payload: JSON.stringify({ status: 'active' }) });
    assert.equal(enabled.statusCode, 200);
    assert.equal((await profile(pair.access_token)).statusCode, 401, 'enabling it again brings no token back');
  });
});
