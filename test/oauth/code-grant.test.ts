import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { basic, bearer, challengeOf, form, FORM, issueCode, jwtParts, registerApp, type RegisteredApp } from '../helpers/code-grant.js';
import { createUser, problemOf, useAppWithAdmin } from '../helpers/test-app.js';

/**
 * API.md section 18, "Codes" and "Tokens", over plain HTTP: what the code grant refuses (RFC 9700's
 * list), and what a refused exchange leaves behind.
 */
describe('the authorization code grant', () => {
  const fixture = useAppWithAdmin();
  const token = (fields: Record<string, string | undefined>, headers: Record<string, string> = {}) =>
    fixture.app.inject({ method: 'POST', url: '/api/oauth/token', headers: { ...FORM, ...headers }, payload: form(fields) });
  /** How the app authenticates: Basic for a confidential app, its client_id alone for a public one. */
  const authOf = (app: RegisteredApp) => (app.secret ? { headers: basic(app.id, app.secret), fields: {} } : { headers: {}, fields: { client_id: app.id } });
  const exchange = (app: RegisteredApp, code: string, verifier: string | undefined, overrides: Record<string, string | undefined> = {}) => {
    const auth = authOf(app);
    return token({ grant_type: 'authorization_code', code, redirect_uri: app.redirectUri, code_verifier: verifier, ...auth.fields, ...overrides }, auth.headers);
  };
  const refresh = (app: RegisteredApp, refreshToken: string, scope?: string) => {
    const auth = authOf(app);
    return token({ grant_type: 'refresh_token', refresh_token: refreshToken, scope, ...auth.fields }, auth.headers);
  };
  const oauthError = (reply: Awaited<ReturnType<typeof token>>, status: number, error: string) => {
    assert.equal(reply.statusCode, status, reply.body);
    assert.match(String(reply.headers['content-type']), /^application\/json/);
    assert.equal(reply.headers['cache-control'], 'no-store');
    const body = reply.json();
    assert.equal(body.error, error, reply.body);
    assert.equal(typeof body.error_description, 'string');
    assert.equal(body.access_token, undefined);
    return body;
  };
  const profile = (accessToken: string) => fixture.app.inject({ method: 'GET', url: '/api/users/profile', headers: bearer(accessToken) });
  const codeRow = (sessionId: string) => fixture.db.selectFrom('authorization_codes').selectAll().where('session_id', '=', sessionId).executeTakeFirst();
  const unspent = async (code: string) => {
    const { hashAuthorizationCode } = await import('../../src/oauth/authorization-codes.js');
    const row = await fixture.db.selectFrom('authorization_codes').select(['used_at', 'session_id']).where('code_hash', '=', hashAuthorizationCode(code)).executeTakeFirstOrThrow();
    return row.used_at === null && row.session_id === null;
  };
  const newApp = (options: Parameters<typeof registerApp>[2] = {}) => registerApp(fixture.app, fixture.admin, options);

  it('answers the tokens with no-store, the refresh token only with offline_access', async () => {
    const app = await newApp();
    const user = await createUser(fixture.app);
    const issued = await issueCode(fixture.db, fixture.testApp.config, { app, userId: user.id, scopes: ['openid', 'offline_access', 'account'] });
    const reply = await exchange(app, issued.code, issued.verifier);
    assert.equal(reply.statusCode, 200, reply.body);
    assert.equal(reply.headers['cache-control'], 'no-store');
    assert.equal(reply.headers.pragma, 'no-cache');
    const body = reply.json();
    assert.deepEqual(Object.keys(body).sort(), ['access_token', 'expires_in', 'id_token', 'refresh_token', 'scope', 'token_type']);
    assert.deepEqual({ token_type: body.token_type, expires_in: body.expires_in, scope: body.scope }, { token_type: 'Bearer', expires_in: fixture.testApp.config.accessTokenTtlSeconds, scope: 'openid offline_access account' });
    assert.equal(jwtParts(body.id_token).header.typ, 'JWT');

    const withPost = await newApp({ type: 'confidential' });
    const posted = await issueCode(fixture.db, fixture.testApp.config, { app: withPost, userId: user.id, scopes: ['account'] });
    const viaForm = await token({ grant_type: 'authorization_code', code: posted.code, redirect_uri: withPost.redirectUri, code_verifier: posted.verifier, client_id: withPost.id, client_secret: withPost.secret });
    assert.equal(viaForm.statusCode, 200, viaForm.body);
    assert.deepEqual(Object.keys(viaForm.json()).sort(), ['access_token', 'expires_in', 'scope', 'token_type'], 'no refresh token, no ID token');
  });

  it('refuses a code presented again and ends the session its first exchange started, refresh token included (RFC 9700)', async () => {
    for (const type of ['confidential', 'public'] as const) {
      const app = await newApp({ type });
      const user = await createUser(fixture.app);
      const issued = await issueCode(fixture.db, fixture.testApp.config, { app, userId: user.id, scopes: ['openid', 'offline_access', 'account'] });
      const first = await exchange(app, issued.code, issued.verifier);
      assert.equal(first.statusCode, 200, first.body);
      const tokens = first.json();
      assert.equal((await profile(tokens.access_token)).statusCode, 200);
      const sid = String(jwtParts(tokens.access_token).payload.sid);

      oauthError(await exchange(app, issued.code, issued.verifier), 400, 'invalid_grant');
      const refused = await profile(tokens.access_token);
      assert.equal(refused.statusCode, 401, refused.body);
      assert.equal(problemOf(refused).code, 'invalid_token');
      oauthError(await refresh(app, tokens.refresh_token), 400, 'invalid_grant');

      const session = await fixture.db.selectFrom('sessions').select('ended_at').where('id', '=', sid).executeTakeFirstOrThrow();
      assert.ok(session.ended_at, 'the session ended');
      const live = await fixture.db.selectFrom('refresh_tokens').select('id').where('family_id', '=', sid).where('revoked_at', 'is', null).execute();
      assert.deepEqual(live, [], 'its refresh tokens are revoked');
      const events = await fixture.db.selectFrom('events').selectAll().where('subject_id', '=', user.id).where('type', '=', 'user.sessions_ended').execute();
      assert.deepEqual(
        events.map((event) => [event.data, event.actor_id]),
        [[{ cause: 'code_reuse', session_ids: [sid] }, null]],
      );
      // The sign-in session itself is not the app's: it stays.
      const signIn = await fixture.db.selectFrom('sessions').select('ended_at').where('id', '=', issued.signinSessionId).executeTakeFirstOrThrow();
      assert.equal(signIn.ended_at, null);
      // A third time changes nothing more.
      oauthError(await exchange(app, issued.code, issued.verifier), 400, 'invalid_grant');
      assert.equal((await fixture.db.selectFrom('events').select('id').where('subject_id', '=', user.id).where('type', '=', 'user.sessions_ended').execute()).length, 1);
    }
  });

  it("refuses another app's code, another redirect_uri, a wrong, malformed or missing code_verifier, and an expired code, without spending the code", async () => {
    const app = await newApp({ type: 'public' });
    const other = await newApp({ type: 'confidential', redirectUri: app.redirectUri });
    const user = await createUser(fixture.app);
    const issued = await issueCode(fixture.db, fixture.testApp.config, { app, userId: user.id, scopes: ['openid', 'account'] });

    oauthError(await exchange(other, issued.code, issued.verifier), 400, 'invalid_grant');
    oauthError(await exchange(app, issued.code, issued.verifier, { redirect_uri: `${app.redirectUri}/` }), 400, 'invalid_grant');
    oauthError(await exchange(app, issued.code, issued.verifier, { redirect_uri: app.redirectUri.toUpperCase() }), 400, 'invalid_grant');
    const wrongVerifier = `${issued.verifier.slice(0, -1)}${issued.verifier.endsWith('A') ? 'B' : 'A'}`;
    oauthError(await exchange(app, issued.code, wrongVerifier), 400, 'invalid_grant');
    oauthError(await exchange(app, issued.code, undefined), 400, 'invalid_grant');
    // The challenge itself, and a verifier outside RFC 7636's syntax whose S256 would match.
    oauthError(await exchange(app, issued.code, challengeOf(issued.verifier)), 400, 'invalid_grant');
    const short = await issueCode(fixture.db, fixture.testApp.config, { app, userId: user.id, scopes: ['account'] });
    await fixture.db.updateTable('authorization_codes').set({ code_challenge: challengeOf('too-short') }).where('code_challenge', '=', challengeOf(short.verifier)).execute();
    oauthError(await exchange(app, short.code, 'too-short'), 400, 'invalid_grant');
    oauthError(await exchange(app, 'an-unknown-code', issued.verifier), 400, 'invalid_grant');
    assert.ok(await unspent(issued.code), 'no failed attempt spent the code');
    assert.equal((await fixture.db.selectFrom('sessions').select('id').where('user_id', '=', user.id).where('client_id', 'is not', null).execute()).length, 0, 'no session started');

    const granted = await exchange(app, issued.code, issued.verifier);
    assert.equal(granted.statusCode, 200, 'the app itself still exchanges it');

    const expired = await issueCode(fixture.db, fixture.testApp.config, { app, userId: user.id, scopes: ['account'] });
    await fixture.db.updateTable('authorization_codes').set({ expires_at: new Date(Date.now() - 1000) }).where('code_challenge', '=', challengeOf(expired.verifier)).execute();
    oauthError(await exchange(app, expired.code, expired.verifier), 400, 'invalid_grant');
  });

  it('refuses a code whose sign-in has ended, or whose user is suspended or deleted', async () => {
    const app = await newApp();
    const user = await createUser(fixture.app);
    const issued = await issueCode(fixture.db, fixture.testApp.config, { app, userId: user.id, scopes: ['account'] });
    const ended = await fixture.app.inject({ method: 'DELETE', url: `/api/auth/sessions/${issued.signinSessionId}`, headers: user.auth });
    assert.equal(ended.statusCode, 204, ended.body);
    oauthError(await exchange(app, issued.code, issued.verifier), 400, 'invalid_grant');

    const suspended = await createUser(fixture.app);
    const beforeSuspension = await issueCode(fixture.db, fixture.testApp.config, { app, userId: suspended.id, scopes: ['account'] });
    // A suspension would end the sign-in session too; the status alone is changed, to see the user's own check.
    await fixture.db.updateTable('users').set({ status: 'suspended' }).where('id', '=', suspended.id).execute();
    oauthError(await exchange(app, beforeSuspension.code, beforeSuspension.verifier), 400, 'invalid_grant');

    const deleted = await createUser(fixture.app);
    const beforeDeletion = await issueCode(fixture.db, fixture.testApp.config, { app, userId: deleted.id, scopes: ['account'] });
    await fixture.db.updateTable('users').set({ deleted_at: new Date() }).where('id', '=', deleted.id).execute();
    oauthError(await exchange(app, beforeDeletion.code, beforeDeletion.verifier), 400, 'invalid_grant');
  });

  it('keeps service clients from the code and refresh grants, and apps from client credentials (unauthorized_client)', async () => {
    const created = await fixture.app.inject({ method: 'POST', url: '/api/clients', headers: fixture.admin.auth, payload: { name: 'ERP', scopes: ['variants:read'] } });
    const service = created.json();
    const app = await newApp();
    const user = await createUser(fixture.app);
    const issued = await issueCode(fixture.db, fixture.testApp.config, { app, userId: user.id, scopes: ['account'] });
    oauthError(await token({ grant_type: 'authorization_code', code: issued.code, redirect_uri: app.redirectUri, code_verifier: issued.verifier }, basic(service.id, service.secret)), 400, 'unauthorized_client');
    oauthError(await token({ grant_type: 'refresh_token', refresh_token: 'anything' }, basic(service.id, service.secret)), 400, 'unauthorized_client');
    oauthError(await token({ grant_type: 'client_credentials' }, basic(app.id, app.secret!)), 400, 'unauthorized_client');
    assert.ok(await unspent(issued.code));
  });

  it('authenticates a confidential app by its secret and a public one by its client_id alone (401 invalid_client otherwise)', async () => {
    const confidential = await newApp({ type: 'confidential' });
    const publicApp = await newApp({ type: 'public' });
    const user = await createUser(fixture.app);
    const issued = await issueCode(fixture.db, fixture.testApp.config, { app: confidential, userId: user.id, scopes: ['account'] });
    const fields = { grant_type: 'authorization_code', code: issued.code, redirect_uri: confidential.redirectUri, code_verifier: issued.verifier };
    oauthError(await token(fields), 401, 'invalid_client');
    oauthError(await token({ ...fields, client_id: confidential.id }), 401, 'invalid_client');
    oauthError(await token({ ...fields, client_id: confidential.id, client_secret: `shop_sk_${'A'.repeat(43)}` }), 401, 'invalid_client');
    const wrongBasic = oauthError(await token(fields, basic(confidential.id, `shop_sk_${'A'.repeat(43)}`)), 401, 'invalid_client');
    assert.ok(wrongBasic);
    oauthError(await token({ ...fields, client_id: 'not-a-uuid' }), 401, 'invalid_client');
    oauthError(await token({ ...fields, client_id: publicApp.id, client_secret: confidential.secret }), 401, 'invalid_client');
    oauthError(await token({ ...fields, client_id: confidential.id, client_secret: confidential.secret }, basic(confidential.id, confidential.secret!)), 400, 'invalid_request');
    assert.ok(await unspent(issued.code));

    const disabled = await newApp({ type: 'public' });
    const patched = await fixture.app.inject({ method: 'PATCH', url: `/api/clients/${disabled.id}`, headers: { ...fixture.admin.auth, 'content-type': 'application/merge-patch+json' }, payload: JSON.stringify({ status: 'disabled' }) });
    assert.equal(patched.statusCode, 200);
    const forDisabled = await issueCode(fixture.db, fixture.testApp.config, { app: disabled, userId: user.id, scopes: ['account'] });
    oauthError(await exchange(disabled, forDisabled.code, forDisabled.verifier), 401, 'invalid_client');

    const publicCode = await issueCode(fixture.db, fixture.testApp.config, { app: publicApp, userId: user.id, scopes: ['account'] });
    const empty = await token({ grant_type: 'authorization_code', code: publicCode.code, redirect_uri: publicApp.redirectUri, code_verifier: publicCode.verifier, client_id: publicApp.id.toUpperCase(), client_secret: '' });
    assert.equal(empty.statusCode, 200, `an empty client_secret is none, the id in any letter case: ${empty.body}`);
  });

  it("refuses a third-party app's code once the user has withdrawn the consent it was issued under", async () => {
    const app = await newApp({ type: 'public' });
    const user = await createUser(fixture.app);
    const issued = await issueCode(fixture.db, fixture.testApp.config, { app, userId: user.id, scopes: ['openid', 'account'] });
    const withdrawn = await fixture.app.inject({ method: 'DELETE', url: `/api/users/profile/apps/${app.id}`, headers: user.auth });
    assert.equal(withdrawn.statusCode, 204, withdrawn.body);
    oauthError(await exchange(app, issued.code, issued.verifier), 400, 'invalid_grant');
    assert.equal((await fixture.db.selectFrom('sessions').select('id').where('user_id', '=', user.id).where('client_id', '=', app.id).execute()).length, 0, 'no session started');

    const firstParty = await newApp({ type: 'public' });
    await fixture.db.updateTable('api_clients').set({ first_party: true }).where('id', '=', firstParty.id).execute();
    const trusted = await issueCode(fixture.db, fixture.testApp.config, { app: firstParty, userId: user.id, scopes: ['openid'], consent: false });
    assert.equal((await exchange(firstParty, trusted.code, trusted.verifier)).statusCode, 200, 'a first-party app needs no consent');
  });

  it('answers invalid_request for a missing parameter and unsupported_grant_type for another grant', async () => {
    const app = await newApp({ type: 'public' });
    oauthError(await token({ grant_type: 'authorization_code', redirect_uri: app.redirectUri, code_verifier: 'x'.repeat(43), client_id: app.id }), 400, 'invalid_request');
    oauthError(await token({ grant_type: 'authorization_code', code: 'abc', code_verifier: 'x'.repeat(43), client_id: app.id }), 400, 'invalid_request');
    oauthError(await token({ grant_type: 'refresh_token', client_id: app.id }), 400, 'invalid_request');
    oauthError(await token({ client_id: app.id }), 400, 'invalid_request');
    oauthError(await token({ grant_type: 'password', client_id: app.id }), 400, 'unsupported_grant_type');
    const repeated = await fixture.app.inject({ method: 'POST', url: '/api/oauth/token', headers: FORM, payload: `grant_type=authorization_code&code=a&code=b&client_id=${app.id}` });
    oauthError(repeated, 400, 'invalid_request');
  });
});

describe('the refresh token grant of an app', () => {
  const fixture = useAppWithAdmin({ environment: { REFRESH_REUSE_INTERVAL: '0' } });
  const token = (fields: Record<string, string | undefined>, headers: Record<string, string> = {}) =>
    fixture.app.inject({ method: 'POST', url: '/api/oauth/token', headers: { ...FORM, ...headers }, payload: form(fields) });
  const refresh = (app: RegisteredApp, refreshToken: string, scope?: string) =>
    token({ grant_type: 'refresh_token', refresh_token: refreshToken, scope, ...(app.secret ? {} : { client_id: app.id }) }, app.secret ? basic(app.id, app.secret) : {});
  const signedIn = async (app: RegisteredApp, scopes = ['openid', 'offline_access', 'account']) => {
    const user = await createUser(fixture.app);
    const issued = await issueCode(fixture.db, fixture.testApp.config, { app, userId: user.id, scopes });
    const auth = app.secret ? basic(app.id, app.secret) : {};
    const reply = await token({ grant_type: 'authorization_code', code: issued.code, redirect_uri: app.redirectUri, code_verifier: issued.verifier, ...(app.secret ? {} : { client_id: app.id }) }, auth);
    assert.equal(reply.statusCode, 200, reply.body);
    return { user, tokens: reply.json() };
  };
  const errorOf = (reply: Awaited<ReturnType<typeof token>>, status: number) => {
    assert.equal(reply.statusCode, status, reply.body);
    assert.equal(reply.headers['cache-control'], 'no-store');
    return reply.json().error;
  };

  it("refuses another app's refresh token and a direct sign-in's (invalid_grant), which stay live", async () => {
    const app = await registerApp(fixture.app, fixture.admin, { type: 'public' });
    const other = await registerApp(fixture.app, fixture.admin, { type: 'confidential' });
    const { user, tokens } = await signedIn(app);
    assert.equal(errorOf(await refresh(other, tokens.refresh_token), 400), 'invalid_grant');
    assert.equal(errorOf(await refresh(app, user.refreshToken), 400), 'invalid_grant');
    assert.equal(errorOf(await refresh(app, tokens.access_token), 400), 'invalid_grant');
    const own = await refresh(app, tokens.refresh_token);
    assert.equal(own.statusCode, 200, own.body);
    const direct = await fixture.app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: user.refreshToken } });
    assert.equal(direct.statusCode, 200, 'the direct sign-in refreshes as before');
  });

  it('refuses a scope the session was not granted (invalid_scope) without spending the refresh token', async () => {
    const app = await registerApp(fixture.app, fixture.admin, { type: 'confidential' });
    const { tokens } = await signedIn(app, ['openid', 'offline_access', 'account']);
    assert.equal(errorOf(await refresh(app, tokens.refresh_token, 'openid email'), 400), 'invalid_scope', 'the app holds email, the session was not granted it');
    assert.equal(errorOf(await refresh(app, tokens.refresh_token, 'variants:read'), 400), 'invalid_scope');
    const narrowed = await refresh(app, tokens.refresh_token, 'account');
    assert.equal(narrowed.statusCode, 200, narrowed.body);
    const body = narrowed.json();
    assert.equal(body.scope, 'account');
    assert.equal(typeof body.id_token, 'string', 'openid was granted: the ID token comes along');
    assert.equal(typeof body.refresh_token, 'string');
  });

  it('drops a scope an admin took from the app since the sign-in, and refreshes no more without offline_access', async () => {
    const app = await registerApp(fixture.app, fixture.admin, { type: 'confidential' });
    const { tokens } = await signedIn(app, ['openid', 'email', 'offline_access', 'account']);
    const patch = (scopes: string[]) =>
      fixture.app.inject({ method: 'PATCH', url: `/api/clients/${app.id}`, headers: { ...fixture.admin.auth, 'content-type': 'application/merge-patch+json' }, payload: { scopes } });
    assert.equal((await patch(['openid', 'offline_access', 'account'])).statusCode, 200);
    const refreshed = await refresh(app, tokens.refresh_token);
    assert.equal(refreshed.statusCode, 200, refreshed.body);
    assert.equal(refreshed.json().scope, 'openid offline_access account');
    assert.equal(jwtParts(refreshed.json().id_token).payload.email, undefined, 'no claim of a scope the app lost');
    assert.equal((await patch(['openid', 'account'])).statusCode, 200);
    assert.equal(errorOf(await refresh(app, refreshed.json().refresh_token), 400), 'invalid_grant');
  });

  it('ends the session when a spent refresh token comes back after the reuse interval', async () => {
    const app = await registerApp(fixture.app, fixture.admin, { type: 'public' });
    const { user, tokens } = await signedIn(app);
    const first = await refresh(app, tokens.refresh_token);
    assert.equal(first.statusCode, 200, first.body);
    const sid = String(jwtParts(tokens.access_token).payload.sid);
    // REFRESH_REUSE_INTERVAL is 0 here: move the rotation a second back rather than wait for it.
    await fixture.db.updateTable('refresh_tokens').set({ used_at: new Date(Date.now() - 1000) }).where('family_id', '=', sid).where('used_at', 'is not', null).execute();
    assert.equal(errorOf(await refresh(app, tokens.refresh_token), 400), 'invalid_grant');
    assert.equal(errorOf(await refresh(app, first.json().refresh_token), 400), 'invalid_grant', 'the successor died with the session');
    const session = await fixture.db.selectFrom('sessions').select('ended_at').where('id', '=', sid).executeTakeFirstOrThrow();
    assert.ok(session.ended_at);
    const events = await fixture.db.selectFrom('events').select('data').where('subject_id', '=', user.id).where('type', '=', 'user.sessions_ended').execute();
    assert.deepEqual(events.map((event) => event.data), [{ cause: 'refresh_reuse', session_ids: [sid] }]);
  });
});
