import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startSession, PASSWORD_ONLY } from '../../src/sessions/token-pairs.js';
import { createTokenIssuer } from '../../src/sessions/token-issuer.js';
import { createUser, problemOf, useAppWithAdmin, type Session } from '../helpers/test-app.js';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const APP_SCOPES = ['openid', 'profile', 'account', 'users:read', 'balance:read', 'variants:read'];

/**
 * API.md section 18, "What an app's token may do": a token an app holds for a user acts for
 * that user, only within its scopes, in a session of section 3 that the app started.
 */
describe("an app's token for a user", () => {
  const fixture = useAppWithAdmin();
  const inject = (method: 'GET' | 'PUT' | 'PATCH' | 'DELETE' | 'POST', url: string, token: string, payload?: unknown) =>
    fixture.app.inject({ method, url, headers: bearer(token), ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });

  const createApp = async (scopes = APP_SCOPES) => {
    const reply = await fixture.app.inject({
      method: 'POST',
      url: '/api/clients',
      headers: fixture.admin.auth,
      payload: { name: 'Storefront', type: 'confidential', redirect_uris: ['https://shop.example.com/callback'], scopes },
    });
    assert.equal(reply.statusCode, 201, reply.body);
    return reply.json().id as string;
  };

  /** The session an app starts for the user once the user signed in and granted `scopes`: what the code exchange does. */
  const appPair = (user: Session, clientId: string, scopes: string[]) =>
    startSession(fixture.db, createTokenIssuer(fixture.testApp.config, undefined), user.id, { userAgent: 'test', ip: '127.0.0.1' }, PASSWORD_ONLY, { clientId, scopes });
  const appToken = async (user: Session, clientId: string, scopes: string[]) => (await appPair(user, clientId, scopes)).access_token;

  const refusal = (reply: Awaited<ReturnType<typeof inject>>, status: number, code: string) => {
    assert.equal(reply.statusCode, status, reply.body);
    assert.equal(problemOf(reply).code, code);
    return reply;
  };

  it("opens the user's own routes with `account`, and nothing it does not name", async () => {
    const clientId = await createApp();
    const customer = await createUser(fixture.app);
    const token = await appToken(customer, clientId, ['openid', 'account']);
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
    assert.equal(claims.client_id, clientId);
    assert.equal(claims.scope, 'openid account');

    assert.equal((await inject('GET', '/api/users/profile', token)).statusCode, 200);
    const renamed = await inject('PATCH', '/api/users/profile', token, { name: 'Renamed by the app' });
    assert.equal(renamed.statusCode, 200, renamed.body);
    assert.equal(renamed.json().name, 'Renamed by the app');
    const sessions = await inject('GET', '/api/auth/sessions', token);
    assert.equal(sessions.statusCode, 200);
    assert.ok(sessions.json().items.some((session: { id: string }) => session.id === claims.sid), "the app's session is among the user's sessions");
    assert.equal((await inject('GET', `/api/users/${customer.id}/balance/ledger`, token)).statusCode, 200, 'the own ledger');

    // Routes that stay with a direct sign-in: 403 forbidden whatever the scopes.
    refusal(await inject('DELETE', '/api/users/profile', token), 403, 'forbidden');
    refusal(await inject('PUT', '/api/users/change-password', token, { current_password: 'password-123', new_password: 'another-password-1' }), 403, 'forbidden');
    refusal(await inject('GET', '/api/auth/mfa', token), 403, 'forbidden');

    // Not an own route: the scope it needs is named.
    const byId = refusal(await inject('GET', `/api/users/${customer.id}`, token), 403, 'insufficient_scope');
    assert.equal(byId.headers['www-authenticate'], 'Bearer error="insufficient_scope", scope="users:read"');
    refusal(await inject('GET', '/api/variants', token), 403, 'insufficient_scope');

    const openIdOnly = await appToken(customer, clientId, ['openid', 'profile']);
    const profile = refusal(await inject('GET', '/api/users/profile', openIdOnly), 403, 'insufficient_scope');
    assert.equal(profile.headers['www-authenticate'], 'Bearer error="insufficient_scope", scope="account"');
    refusal(await inject('GET', '/api/auth/sessions', openIdOnly), 403, 'insufficient_scope');
  });

  it("opens a scope of section 11 only where the user's role allows it, and `account` for the user's own rows only", async () => {
    const clientId = await createApp();
    const customer = await createUser(fixture.app);
    const admin = fixture.admin;

    const adminReader = await appToken(admin, clientId, ['users:read', 'balance:read']);
    assert.equal((await inject('GET', '/api/users', adminReader)).statusCode, 200);
    assert.equal((await inject('GET', `/api/users/${customer.id}/balance/ledger`, adminReader)).statusCode, 200);
    const customerReader = await appToken(customer, clientId, ['users:read', 'variants:read']);
    refusal(await inject('GET', '/api/users', customerReader), 403, 'forbidden');
    assert.equal((await inject('GET', '/api/variants', customerReader)).statusCode, 200);

    const adminAccount = await appToken(admin, clientId, ['account']);
    const othersLedger = refusal(await inject('GET', `/api/users/${customer.id}/balance/ledger`, adminAccount), 403, 'insufficient_scope');
    assert.equal(othersLedger.headers['www-authenticate'], 'Bearer error="insufficient_scope", scope="balance:read"');
    assert.equal((await inject('GET', `/api/users/${admin.id}/balance/ledger`, adminAccount)).statusCode, 200);

    // An admin's token through an app never reaches the admin's tools of a direct sign-in.
    const adminAll = await appToken(admin, clientId, APP_SCOPES);
    for (const url of ['/api/clients', '/api/webhooks', '/api/signing-keys']) refusal(await inject('GET', url, adminAll), 403, 'forbidden');
    const sessionsOfUser = refusal(await inject('GET', `/api/users/${customer.id}/sessions`, adminAll), 403, 'insufficient_scope');
    assert.equal(sessionsOfUser.headers['www-authenticate'], 'Bearer error="insufficient_scope"', 'no scope opens it to an app');
  });

  it('is refused at once when its session ends, its app is disabled or loses the scope, or the token names another app', async () => {
    const clientId = await createApp();
    const otherClientId = await createApp();
    const customer = await createUser(fixture.app);
    let token = await appToken(customer, clientId, ['account']);
    const profile = () => inject('GET', '/api/users/profile', token);
    assert.equal((await profile()).statusCode, 200);

    // The session named, signed as if by another app: no such session of that app.
    const issuer = createTokenIssuer(fixture.testApp.config, undefined);
    let claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
    const forged = issuer.signAccessToken(customer.id, claims.sid, { amr: ['pwd'], authTime: new Date() }, { clientId: otherClientId, scopes: ['account'] });
    refusal(await inject('GET', '/api/users/profile', forged), 401, 'invalid_token');

    const setScopes = (scopes: string[]) =>
      fixture.app.inject({ method: 'PATCH', url: `/api/clients/${clientId}`, headers: { ...fixture.admin.auth, 'content-type': 'application/merge-patch+json' }, payload: JSON.stringify({ scopes }) });
    assert.equal((await setScopes(['openid'])).statusCode, 200);
    refusal(await profile(), 403, 'insufficient_scope');
    assert.equal((await setScopes(['openid', 'account'])).statusCode, 200);
    assert.equal((await profile()).statusCode, 200);

    const setStatus = (status: string) =>
      fixture.app.inject({ method: 'PATCH', url: `/api/clients/${clientId}`, headers: { ...fixture.admin.auth, 'content-type': 'application/merge-patch+json' }, payload: JSON.stringify({ status }) });
    assert.equal((await setStatus('disabled')).statusCode, 200);
    refusal(await profile(), 401, 'invalid_token');
    assert.equal((await setStatus('active')).statusCode, 200);
    refusal(await profile(), 401, 'invalid_token');
    assert.ok((await fixture.db.selectFrom('sessions').select('ended_at').where('id', '=', claims.sid).executeTakeFirstOrThrow()).ended_at, 'disabling the app ended its session: enabling it brings nothing back (section 11)');

    token = await appToken(customer, clientId, ['account']);
    claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
    assert.equal((await profile()).statusCode, 200, 'a new sign-in works once the app is enabled');

    // The user ends the app's session from a direct sign-in: the app's token is dead on the next request.
    const ended = await fixture.app.inject({ method: 'DELETE', url: `/api/auth/sessions/${claims.sid}`, headers: customer.auth });
    assert.equal(ended.statusCode, 204, ended.body);
    refusal(await profile(), 401, 'invalid_token');
    const row = await fixture.db.selectFrom('sessions').select(['client_id', 'scopes', 'ended_at']).where('id', '=', claims.sid).executeTakeFirstOrThrow();
    assert.deepEqual({ client_id: row.client_id, scopes: row.scopes, ended: row.ended_at !== null }, { client_id: clientId, scopes: ['account'], ended: true });
  });

  it("has its refresh token taken only from the app, never at the section 3 refresh, and a direct sign-in's token never passes for an app's", async () => {
    const clientId = await createApp();
    const customer = await createUser(fixture.app);
    const pair = await appPair(customer, clientId, ['account']);
    refusal(await fixture.app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: pair.refresh_token } }), 401, 'invalid_token');
    assert.equal((await inject('GET', '/api/users/profile', pair.access_token)).statusCode, 200, 'the refusal ended nothing');
    // A token without the app's claims for the app's session: not a direct sign-in's.
    const claims = JSON.parse(Buffer.from(pair.access_token.split('.')[1]!, 'base64url').toString());
    const withoutApp = createTokenIssuer(fixture.testApp.config, undefined).signAccessToken(customer.id, claims.sid, { amr: ['pwd'], authTime: new Date() });
    refusal(await inject('DELETE', '/api/users/profile', withoutApp), 401, 'invalid_token');
  });

  it("is 403 account_suspended while its user is suspended, like the user's own token", async () => {
    const clientId = await createApp();
    const customer = await createUser(fixture.app);
    const token = await appToken(customer, clientId, ['account']);
    const suspended = await fixture.app.inject({ method: 'PUT', url: `/api/users/${customer.id}/status`, headers: fixture.admin.auth, payload: { status: 'suspended' } });
    assert.equal(suspended.statusCode, 200, suspended.body);
    refusal(await inject('GET', '/api/users/profile', token), 403, 'account_suspended');
  });
});
