import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { decodeJwt } from '../helpers/jwt.js';
import { buildTestApp, createUser, login, loginAdmin, onPostgres, problemOf, type Session, type TestApp } from '../helpers/test-app.js';

describe('sessions that end at once', () => {
  let testApp: TestApp;
  let admin: Session;
  before(async () => {
    testApp = await buildTestApp();
    admin = await loginAdmin(testApp.app);
  });
  after(() => testApp.close());
  const inject = (request: InjectOptions) => testApp.app.inject(request);
  const profile = (auth: { authorization: string }) => inject({ method: 'GET', url: '/api/users/profile', headers: auth });
  const sessionsOf = async (auth: { authorization: string }) => (await inject({ method: 'GET', url: '/api/auth/sessions', headers: auth })).json().items;

  it('starts a session at each login, names it in the access token, and lists the caller’s open ones', async () => {
    const user = await createUser(testApp.app);
    const second = await inject({ method: 'POST', url: '/api/auth/login', headers: { 'user-agent': 'Phone/1.0' }, payload: { email: user.email, password: user.password } });
    const secondAuth = { authorization: `Bearer ${second.json().access_token}` };
    const sid = decodeJwt(second.json().access_token).payload.sid;
    const items = await sessionsOf(secondAuth);
    assert.equal(items.length, 2);
    assert.deepEqual(items[0], { ...items[0], id: sid, current: true, user_agent: 'Phone/1.0', ip: '127.0.0.1' });
    assert.equal(items[1].current, false);
    assert.equal(decodeJwt(user.accessToken).payload.sid, items[1].id);
  });

  it('ends one session: its access token fails on the very next request, the other session goes on', async () => {
    const user = await createUser(testApp.app);
    const other = await login(testApp.app, user.email, user.password);
    const sid = decodeJwt(other.accessToken).payload.sid as string;
    assert.equal((await inject({ method: 'DELETE', url: `/api/auth/sessions/${sid}`, headers: user.auth })).statusCode, 204);
    const cut = await profile(other.auth);
    assert.equal(cut.statusCode, 401);
    assert.equal(problemOf(cut).code, 'invalid_token');
    assert.equal((await inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: other.refreshToken } })).statusCode, 401);
    assert.equal((await profile(user.auth)).statusCode, 200);
    const foreign = await inject({ method: 'DELETE', url: `/api/auth/sessions/${decodeJwt(admin.accessToken).payload.sid}`, headers: user.auth });
    assert.equal(foreign.statusCode, 404, "another user's session is not the caller's to end");
    assert.equal((await profile(admin.auth)).statusCode, 200);
    assert.equal((await inject({ method: 'DELETE', url: `/api/auth/sessions/${randomUUID()}`, headers: user.auth })).statusCode, 404);
  });

  it('ends the session on logout, on an admin’s sign-out, on a password change; records who ended them', async () => {
    const user = await createUser(testApp.app);
    await inject({ method: 'POST', url: '/api/auth/logout', payload: { refresh_token: user.refreshToken } });
    assert.equal((await profile(user.auth)).statusCode, 401, 'logout');

    const phone = await login(testApp.app, user.email, user.password);
    const laptop = await login(testApp.app, user.email, user.password);
    const listed = await inject({ method: 'GET', url: `/api/users/${user.id}/sessions`, headers: admin.auth });
    assert.equal(listed.json().items.length, 2);
    assert.equal((await inject({ method: 'DELETE', url: `/api/users/${user.id}/sessions`, headers: admin.auth })).statusCode, 204);
    assert.equal((await profile(phone.auth)).statusCode, 401, 'admin sign-out');
    assert.equal((await profile(laptop.auth)).statusCode, 401);
    assert.deepEqual((await inject({ method: 'GET', url: `/api/users/${user.id}/sessions`, headers: admin.auth })).json().items, []);
    assert.equal((await inject({ method: 'GET', url: `/api/users/${user.id}/sessions`, headers: phone.auth })).statusCode, 401);
    const manager = await createUser(testApp.app, { role: 'manager', admin });
    assert.equal((await inject({ method: 'DELETE', url: `/api/users/${user.id}/sessions`, headers: manager.auth })).statusCode, 403);

    const kept = await login(testApp.app, user.email, user.password);
    const elsewhere = await login(testApp.app, user.email, user.password);
    const changed = await inject({ method: 'PUT', url: '/api/users/change-password', headers: kept.auth, payload: { current_password: user.password, new_password: 'brand-new-password' } });
    assert.equal(changed.statusCode, 200);
    assert.equal((await profile(elsewhere.auth)).statusCode, 401, 'password change');
    assert.equal((await profile(kept.auth)).statusCode, 401, 'the old session too: the new pair starts a new one');
    assert.equal((await profile({ authorization: `Bearer ${changed.json().access_token}` })).statusCode, 200);

    const ended = await testApp.db.selectFrom('events').selectAll().where('subject_id', '=', user.id).where('type', '=', 'user.sessions_ended').orderBy('created_at').execute();
    assert.deepEqual(ended.map((event) => [event.data.cause, event.actor_id]), [['logout', user.id], ['admin_sign_out', admin.id]]);
  });

  it("lets an admin end one of a user's sessions (404 for a session not the user's, 403 for a manager)", async () => {
    const user = await createUser(testApp.app);
    const other = await login(testApp.app, user.email, user.password);
    const sid = decodeJwt(other.accessToken).payload.sid as string;
    const end = (userId: string, sessionId: string, auth = admin.auth) => inject({ method: 'DELETE', url: `/api/users/${userId}/sessions/${sessionId}`, headers: auth });
    const manager = await createUser(testApp.app, { role: 'manager', admin });
    assert.equal((await end(user.id, sid, manager.auth)).statusCode, 403);
    assert.equal((await end(manager.id, sid)).statusCode, 404, "the session is not this user's");
    assert.equal((await end(randomUUID(), sid)).statusCode, 404);
    assert.equal((await end(user.id, sid)).statusCode, 204);
    assert.equal((await profile(other.auth)).statusCode, 401, 'the ended session is cut at once');
    assert.equal((await profile(user.auth)).statusCode, 200, 'the other session goes on');
    const again = await end(user.id, sid);
    assert.equal(again.statusCode, 404);
    assert.equal(problemOf(again).code, 'not_found');
    const ended = await testApp.db.selectFrom('events').selectAll().where('subject_id', '=', user.id).where('type', '=', 'user.sessions_ended').execute();
    assert.deepEqual(ended.map((event) => [event.data.cause, event.data.session_ids, event.actor_id]), [['admin_sign_out', [sid], admin.id]]);
  });

  it('gives a spent refresh token within REFRESH_REUSE_INTERVAL a fresh access token and the very refresh token its rotation issued', async () => {
    const user = await createUser(testApp.app);
    const [first, second] = [
      await inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: user.refreshToken } }),
      await inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: user.refreshToken } }),
    ];
    assert.equal(first.statusCode, 200);
    assert.equal(second.statusCode, 200, 'a client refreshing twice at once is not signed out');
    assert.equal(second.json().refresh_token, first.json().refresh_token, 'the replay gets the same refresh token: the session does not fork');
    assert.notEqual(second.json().access_token, first.json().access_token);
    const sid = decodeJwt(user.accessToken).payload.sid;
    assert.equal(decodeJwt(first.json().access_token).payload.sid, sid);
    assert.equal(decodeJwt(second.json().access_token).payload.sid, sid);
    const live = await testApp.db.selectFrom('refresh_tokens').select('id').where('family_id', '=', String(sid)).where('used_at', 'is', null).where('revoked_at', 'is', null).execute();
    assert.equal(live.length, 1, 'one live refresh token in the session');
    assert.equal((await profile({ authorization: `Bearer ${second.json().access_token}` })).statusCode, 200);
    await testApp.db.updateTable('refresh_tokens').set({ used_at: new Date(Date.now() - 11_000) }).where('family_id', '=', String(sid)).where('used_at', 'is not', null).execute();
    const late = await inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: user.refreshToken } });
    assert.equal(late.statusCode, 401, 'later, the re-use ends the session');
    assert.match(problemOf(late).detail, /refresh token/);
    assert.equal((await profile({ authorization: `Bearer ${first.json().access_token}` })).statusCode, 401);
    assert.equal((await inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: first.json().refresh_token } })).statusCode, 401);
    const ended = await testApp.db.selectFrom('events').selectAll().where('subject_id', '=', user.id).where('type', '=', 'user.sessions_ended').execute();
    assert.deepEqual(ended.map((event) => [event.data.cause, event.data.session_ids, event.actor_id]), [['refresh_reuse', [sid], null]]);
  });

  it('logs a warning when a spent refresh token comes back after the interval, without the token', async () => {
    const logLines: string[] = [];
    const logged = await buildTestApp({ logLines });
    try {
      const user = await createUser(logged.app);
      await logged.app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: user.refreshToken } });
      await logged.db.updateTable('refresh_tokens').set({ used_at: new Date(Date.now() - 11_000) }).where('used_at', 'is not', null).execute();
      await logged.app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: user.refreshToken } });
      const warning = logLines.map((line) => JSON.parse(line)).find((entry) => entry.level === 40 && /refresh token/.test(entry.msg));
      assert.ok(warning, 'a warning was logged');
      assert.equal(warning.user_id, user.id);
      assert.ok(!logLines.join('\n').includes(user.refreshToken), 'the token itself is not logged');
    } finally {
      await logged.close();
    }
  });

  it('notes a session as used at most once a minute, without a write per request', async () => {
    const user = await createUser(testApp.app);
    const sid = String(decodeJwt(user.accessToken).payload.sid);
    const lastUsed = async () => (await testApp.db.selectFrom('sessions').select('last_used_at').where('id', '=', sid).executeTakeFirstOrThrow()).last_used_at.getTime();
    const before = await lastUsed();
    for (let i = 0; i < 5; i++) await profile(user.auth);
    assert.equal(await lastUsed(), before, 'requests within the minute write nothing');
    const longAgo = new Date(Date.now() - 5 * 60_000);
    // Setting expires_at again (to itself) notifies the instance, which reads the session anew
    // (an instance that knows the caller notes its use a minute after it last did).
    await testApp.db.updateTable('sessions').set((eb) => ({ last_used_at: longAgo, expires_at: eb.ref('expires_at') })).where('id', '=', sid).execute();
    await profile(user.auth);
    let updated = longAgo.getTime();
    for (let attempt = 0; attempt < 50 && updated === longAgo.getTime(); attempt++) {
      updated = await lastUsed();
      if (updated === longAgo.getTime()) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.ok(updated > longAgo.getTime(), 'a request after a minute notes the use');
  });
});

describe('sessions across instances (PostgreSQL)', { skip: !onPostgres && 'needs PostgreSQL' }, () => {
  it('ends sessions on one instance, for every cause, and cuts their access tokens on the next request to the other', async () => {
    const first = await buildTestApp();
    const second = await buildTestApp({ databaseUrl: first.databaseUrl! });
    try {
      const admin = await loginAdmin(first.app);
      const causes: [string, (user: Session) => Promise<unknown>][] = [
        ['logout', (user) => first.app.inject({ method: 'POST', url: '/api/auth/logout', payload: { refresh_token: user.refreshToken } })],
        ['DELETE of the session', (user) => first.app.inject({ method: 'DELETE', url: `/api/auth/sessions/${decodeJwt(user.accessToken).payload.sid}`, headers: user.auth })],
        ["an admin's sign-out", (user) => first.app.inject({ method: 'DELETE', url: `/api/users/${user.id}/sessions`, headers: admin.auth })],
        ['a password change', (user) => first.app.inject({ method: 'PUT', url: '/api/users/change-password', headers: user.auth, payload: { current_password: user.password, new_password: 'changed-password-1' } })],
        ['a deletion', (user) => first.app.inject({ method: 'DELETE', url: `/api/users/${user.id}`, headers: admin.auth })],
      ];
      for (const [cause, end] of causes) {
        const user = await createUser(first.app);
        const elsewhere = () => second.app.inject({ method: 'GET', url: '/api/users/profile', headers: user.auth });
        assert.equal((await elsewhere()).statusCode, 200, cause);
        await end(user);
        assert.equal((await elsewhere()).statusCode, 401, cause);
      }
      const suspended = await createUser(first.app);
      await first.app.inject({ method: 'PUT', url: `/api/users/${suspended.id}/status`, headers: admin.auth, payload: { status: 'suspended' } });
      assert.equal(problemOf(await second.app.inject({ method: 'GET', url: '/api/users/profile', headers: suspended.auth })).code, 'account_suspended');
      await first.app.inject({ method: 'PUT', url: `/api/users/${suspended.id}/status`, headers: admin.auth, payload: { status: 'active' } });
      assert.equal((await second.app.inject({ method: 'GET', url: '/api/users/profile', headers: suspended.auth })).statusCode, 401, 'suspension ended the session');
    } finally {
      await second.app.close();
      await first.close();
    }
  });
});
