import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import {
  buildTestApp,
  createUser,
  login,
  loginAdmin,
  problemOf,
  uniqueEmail,
  type Session,
  type TestApp,
} from '../helpers/test-app.js';

describe('users', () => {
  let testApp: TestApp;
  let admin: Session;
  let manager: Session;

  before(async () => {
    testApp = await buildTestApp();
    admin = await loginAdmin(testApp.app);
    manager = await createUser(testApp.app, { role: 'manager', admin });
  });
  after(() => testApp.close());

  const inject = (options: InjectOptions) => testApp.app.inject(options);
  const storedUser = (id: string) => testApp.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();

  describe('profile', () => {
    it('returns the caller with an ETag equal to its version', async () => {
      const user = await createUser(testApp.app, { name: 'Grace' });
      const response = await inject({ method: 'GET', url: '/api/users/profile', headers: user.auth });
      assert.equal(response.statusCode, 200);
      assert.equal(response.json().name, 'Grace');
      assert.equal(response.headers.etag, `"${response.json().version}"`);
      assert.match(response.json().created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    });

    it('replaces name, email and phone; a missing phone becomes null; version grows by one', async () => {
      const user = await createUser(testApp.app);
      const email = uniqueEmail('renamed');
      const first = await inject({ method: 'PUT', url: '/api/users/profile', headers: user.auth, payload: { name: 'New', email, phone: '123', current_password: user.password } });
      assert.equal(first.statusCode, 200);
      assert.equal(first.json().phone, '123');
      assert.equal(first.json().version, 2);
      assert.equal(first.headers.etag, '"2"');
      const second = await inject({ method: 'PUT', url: '/api/users/profile', headers: user.auth, payload: { name: 'New', email } });
      assert.equal(second.json().phone, null);
      assert.equal((await storedUser(user.id))?.phone, null);
    });

    it('refuses role, status, balance or id in a profile update (closed body)', async () => {
      const user = await createUser(testApp.app);
      for (const extra of [{ role: 'admin' }, { status: 'active' }, { balance: 100 }, { id: user.id }]) {
        const response = await inject({
          method: 'PUT',
          url: '/api/users/profile',
          headers: user.auth,
          payload: { name: 'X', email: user.email, ...extra },
        });
        assert.equal(response.statusCode, 400);
        assert.equal(problemOf(response).code, 'validation_failed');
      }
      const stored = await storedUser(user.id);
      assert.equal(stored?.role, 'user');
      assert.equal(stored?.version, 1);
    });

    it('refuses an email another account uses, in any case (409 email_taken)', async () => {
      const user = await createUser(testApp.app);
      const other = await createUser(testApp.app);
      const response = await inject({
        method: 'PUT',
        url: '/api/users/profile',
        headers: user.auth,
        payload: { name: 'X', email: other.email.toUpperCase(), current_password: user.password },
      });
      assert.equal(response.statusCode, 409);
      assert.equal(problemOf(response).code, 'email_taken');
    });

    it('honours If-Match: a stale tag gets 412 and changes nothing', async () => {
      const user = await createUser(testApp.app);
      const stale = await inject({
        method: 'PUT',
        url: '/api/users/profile',
        headers: { ...user.auth, 'if-match': '"7"' },
        payload: { name: 'Changed', email: user.email },
      });
      assert.equal(stale.statusCode, 412);
      assert.equal(problemOf(stale).code, 'precondition_failed');
      assert.equal((await storedUser(user.id))?.name, 'Test User');
      const fresh = await inject({
        method: 'PUT',
        url: '/api/users/profile',
        headers: { ...user.auth, 'if-match': '"1"' },
        payload: { name: 'Changed', email: user.email },
      });
      assert.equal(fresh.statusCode, 200);
      const weak = await inject({
        method: 'PUT',
        url: '/api/users/profile',
        headers: { ...user.auth, 'if-match': 'W/"2"' },
        payload: { name: 'Again', email: user.email },
      });
      assert.equal(weak.statusCode, 412, 'If-Match compares strongly');
    });
  });

  describe('change-password', () => {
    it('returns a new pair; old access and refresh tokens stop working; the new password logs in', async () => {
      const user = await createUser(testApp.app);
      const otherSession = await login(testApp.app, user.email, user.password);
      const response = await inject({
        method: 'PUT',
        url: '/api/users/change-password',
        headers: user.auth,
        payload: { current_password: user.password, new_password: 'brand-new-password' },
      });
      assert.equal(response.statusCode, 200);
      const pair = response.json();
      assert.equal(pair.token_type, 'Bearer');

      for (const session of [user, otherSession]) {
        const old = await inject({ method: 'GET', url: '/api/users/profile', headers: session.auth });
        assert.equal(old.statusCode, 401);
        assert.equal(problemOf(old).code, 'invalid_token');
        const refresh = await inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: session.refreshToken } });
        assert.equal(refresh.statusCode, 401);
      }
      const fresh = await inject({ method: 'GET', url: '/api/users/profile', headers: { authorization: `Bearer ${pair.access_token}` } });
      assert.equal(fresh.statusCode, 200);
      const refreshed = await inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: pair.refresh_token } });
      assert.equal(refreshed.statusCode, 200);
      await login(testApp.app, user.email, 'brand-new-password');
      const oldPassword = await inject({ method: 'POST', url: '/api/auth/login', payload: { email: user.email, password: user.password } });
      assert.equal(oldPassword.statusCode, 401);
    });

    it('refuses a wrong current password with 403 wrong_password and a short new one with 400', async () => {
      const user = await createUser(testApp.app);
      const wrong = await inject({
        method: 'PUT',
        url: '/api/users/change-password',
        headers: user.auth,
        payload: { current_password: 'not-my-password', new_password: 'brand-new-password' },
      });
      assert.equal(wrong.statusCode, 403);
      assert.equal(problemOf(wrong).code, 'wrong_password');
      const short = await inject({
        method: 'PUT',
        url: '/api/users/change-password',
        headers: user.auth,
        payload: { current_password: user.password, new_password: 'short' },
      });
      assert.equal(short.statusCode, 400);
      assert.equal((await inject({ method: 'GET', url: '/api/users/profile', headers: user.auth })).statusCode, 200);
    });
  });

  describe('reading users', () => {
    it('lets managers and admins read any user, a user only itself (403 otherwise), and 404 an unknown id', async () => {
      const user = await createUser(testApp.app);
      const other = await createUser(testApp.app);
      for (const caller of [admin, manager, user]) {
        const response = await inject({ method: 'GET', url: `/api/users/${user.id}`, headers: caller.auth });
        assert.equal(response.statusCode, 200);
        assert.equal(response.json().id, user.id);
        assert.equal(response.headers.etag, `"${response.json().version}"`);
      }
      const forbidden = await inject({ method: 'GET', url: `/api/users/${other.id}`, headers: user.auth });
      assert.equal(forbidden.statusCode, 403);
      assert.equal(problemOf(forbidden).code, 'forbidden');
      const missing = await inject({ method: 'GET', url: '/api/users/00000000-0000-4000-8000-000000000000', headers: admin.auth });
      assert.equal(missing.statusCode, 404);
      assert.equal(problemOf(missing).code, 'not_found');
      const upper = await inject({ method: 'GET', url: `/api/users/${user.id.toUpperCase()}`, headers: admin.auth });
      assert.equal(upper.statusCode, 200);
      assert.equal(upper.json().id, user.id);
    });

    it('lists users newest first for managers and admins, filtered by q, role and status', async () => {
      const marker = `zq${Date.now()}`;
      const created: Session[] = [];
      for (let i = 0; i < 3; i++) created.push(await createUser(testApp.app, { name: `${marker} person ${i}` }));
      const byName = await inject({ method: 'GET', url: `/api/users?q=${marker.toUpperCase()}&include_total=true`, headers: manager.auth });
      assert.equal(byName.statusCode, 200);
      assert.deepEqual(
        byName.json().items.map((item: { id: string }) => item.id),
        created.map((session) => session.id).reverse(),
      );
      assert.equal(byName.json().total, 3);
      assert.equal(byName.json().next_cursor, null);

      const byEmail = await inject({ method: 'GET', url: `/api/users?q=${encodeURIComponent(created[0]!.email.slice(0, 12))}`, headers: admin.auth });
      assert.ok(byEmail.json().items.some((item: { id: string }) => item.id === created[0]!.id));

      const managers = await inject({ method: 'GET', url: '/api/users?role=manager&limit=100', headers: admin.auth });
      assert.ok(managers.json().items.every((item: { role: string }) => item.role === 'manager'));
      assert.ok(managers.json().items.some((item: { id: string }) => item.id === manager.id));

      const wildcard = await inject({ method: 'GET', url: '/api/users?q=%25', headers: admin.auth });
      assert.equal(wildcard.json().items.length, 0, '% is matched literally');

      const forbidden = await inject({ method: 'GET', url: '/api/users', headers: created[0]!.auth });
      assert.equal(forbidden.statusCode, 403);
      for (const query of ['role=owner', 'status=gone', 'limit=0', 'limit=abc', 'unknown=1', 'include_total=maybe']) {
        const bad = await inject({ method: 'GET', url: `/api/users?${query}`, headers: admin.auth });
        assert.equal(bad.statusCode, 400, query);
        assert.equal(problemOf(bad).code, 'validation_failed');
      }
      const badCursor = await inject({ method: 'GET', url: '/api/users?cursor=garbage', headers: admin.auth });
      assert.equal(badCursor.statusCode, 400);
      assert.equal(problemOf(badCursor).code, 'invalid_parameter');
    });

    it('walks every page once while other users are inserted', async () => {
      const marker = `walk${Date.now()}`;
      const initial = new Set<string>();
      for (let i = 0; i < 7; i++) initial.add((await createUser(testApp.app, { name: `${marker} ${i}` })).id);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const url: string = `/api/users?q=${marker}&limit=2${cursor ? `&cursor=${cursor}` : ''}`;
        const page = await inject({ method: 'GET', url, headers: admin.auth });
        assert.equal(page.statusCode, 200);
        seen.push(...page.json().items.map((item: { id: string }) => item.id));
        cursor = page.json().next_cursor;
        await createUser(testApp.app, { name: `${marker} late` });
      } while (cursor);
      assert.equal(new Set(seen).size, seen.length, 'no user twice');
      for (const id of initial) assert.ok(seen.includes(id), 'every user that existed before the walk is seen');
    });
  });

  describe('admin actions', () => {
    it('changes role and status, with ETag and If-Match', async () => {
      const user = await createUser(testApp.app);
      const promoted = await inject({ method: 'PUT', url: `/api/users/${user.id}/role`, headers: { ...admin.auth, 'if-match': '"1"' }, payload: { role: 'manager' } });
      assert.equal(promoted.statusCode, 200);
      assert.equal(promoted.json().role, 'manager');
      assert.equal(promoted.headers.etag, '"2"');
      const stale = await inject({ method: 'PUT', url: `/api/users/${user.id}/status`, headers: { ...admin.auth, 'if-match': '"1"' }, payload: { status: 'suspended' } });
      assert.equal(stale.statusCode, 412);
      assert.equal((await storedUser(user.id))?.status, 'active');
      const badRole = await inject({ method: 'PUT', url: `/api/users/${user.id}/role`, headers: admin.auth, payload: { role: 'owner' } });
      assert.equal(badRole.statusCode, 400);
      const missing = await inject({ method: 'PUT', url: '/api/users/00000000-0000-4000-8000-000000000000/role', headers: admin.auth, payload: { role: 'user' } });
      assert.equal(missing.statusCode, 404);
    });

    it('applies a role change to the very next request made with an older token', async () => {
      const user = await createUser(testApp.app);
      assert.equal((await inject({ method: 'GET', url: '/api/users', headers: user.auth })).statusCode, 403);
      await inject({ method: 'PUT', url: `/api/users/${user.id}/role`, headers: admin.auth, payload: { role: 'manager' } });
      assert.equal((await inject({ method: 'GET', url: '/api/users', headers: user.auth })).statusCode, 200);
      await inject({ method: 'PUT', url: `/api/users/${user.id}/role`, headers: admin.auth, payload: { role: 'user' } });
      assert.equal((await inject({ method: 'GET', url: '/api/users', headers: user.auth })).statusCode, 403);
    });

    it('suspension makes old tokens 403 account_suspended; it ended their session, so after reactivation they are 401', async () => {
      const user = await createUser(testApp.app);
      await inject({ method: 'PUT', url: `/api/users/${user.id}/status`, headers: admin.auth, payload: { status: 'suspended' } });
      const suspended = await inject({ method: 'GET', url: '/api/users/profile', headers: user.auth });
      assert.equal(suspended.statusCode, 403);
      assert.equal(problemOf(suspended).code, 'account_suspended');
      await inject({ method: 'PUT', url: `/api/users/${user.id}/status`, headers: admin.auth, payload: { status: 'active' } });
      const afterReactivation = await inject({ method: 'GET', url: '/api/users/profile', headers: user.auth });
      assert.equal(afterReactivation.statusCode, 401);
      assert.equal(problemOf(afterReactivation).code, 'invalid_token');
    });

    it('soft-deletes: 404 from then on, gone from lists, email free again, tokens 401, row kept', async () => {
      const user = await createUser(testApp.app);
      const response = await inject({ method: 'DELETE', url: `/api/users/${user.id}`, headers: admin.auth });
      assert.equal(response.statusCode, 204);
      assert.equal((await inject({ method: 'GET', url: `/api/users/${user.id}`, headers: admin.auth })).statusCode, 404);
      assert.equal((await inject({ method: 'DELETE', url: `/api/users/${user.id}`, headers: admin.auth })).statusCode, 404);
      const list = await inject({ method: 'GET', url: `/api/users?q=${encodeURIComponent(user.email)}`, headers: admin.auth });
      assert.equal(list.json().items.length, 0);
      const token = await inject({ method: 'GET', url: '/api/users/profile', headers: user.auth });
      assert.equal(token.statusCode, 401);
      assert.equal(problemOf(token).code, 'invalid_token');
      const refresh = await inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: user.refreshToken } });
      assert.equal(refresh.statusCode, 401);
      const again = await createUser(testApp.app, { email: user.email });
      assert.notEqual(again.id, user.id);
      assert.ok((await storedUser(user.id))?.deleted_at);
    });

    it('refuses to leave no active admin (409 last_admin) for demotion, suspension and deletion', async () => {
      const admins = await inject({ method: 'GET', url: '/api/users?role=admin&status=active', headers: admin.auth });
      assert.equal(admins.json().items.length, 1, 'the bootstrap admin is the only active admin');
      const attempts: InjectOptions[] = [
        { method: 'PUT', url: `/api/users/${admin.id}/role`, payload: { role: 'manager' } },
        { method: 'PUT', url: `/api/users/${admin.id}/status`, payload: { status: 'suspended' } },
        { method: 'DELETE', url: `/api/users/${admin.id}` },
      ];
      for (const attempt of attempts) {
        const response = await inject({ ...attempt, headers: admin.auth });
        assert.equal(response.statusCode, 409, `${attempt.method} ${attempt.url}`);
        assert.equal(problemOf(response).code, 'last_admin');
      }
      const stored = await storedUser(admin.id);
      assert.equal(stored?.role, 'admin');
      assert.equal(stored?.status, 'active');
      assert.equal(stored?.deleted_at, null);

      const second = await createUser(testApp.app, { role: 'admin', admin });
      const demote = await inject({ method: 'PUT', url: `/api/users/${second.id}/role`, headers: admin.auth, payload: { role: 'user' } });
      assert.equal(demote.statusCode, 200, 'another admin may go while one remains');
    });
  });

  describe('permission matrix', () => {
    it('answers each endpoint by role: 401 without a token, 403 without the role', async () => {
      const user = await createUser(testApp.app);
      const target = await createUser(testApp.app);
      const endpoints: { request: InjectOptions; allowed: ('user' | 'manager' | 'admin')[] }[] = [
        { request: { method: 'GET', url: '/api/users/profile' }, allowed: ['user', 'manager', 'admin'] },
        { request: { method: 'GET', url: '/api/users' }, allowed: ['manager', 'admin'] },
        { request: { method: 'GET', url: `/api/users/${target.id}` }, allowed: ['manager', 'admin'] },
        { request: { method: 'PUT', url: `/api/users/${target.id}/status`, payload: { status: 'active' } }, allowed: ['admin'] },
        { request: { method: 'PUT', url: `/api/users/${target.id}/role`, payload: { role: 'user' } }, allowed: ['admin'] },
        { request: { method: 'PUT', url: `/api/users/${target.id}/balance`, payload: { delta: 1, reason: 'matrix' } }, allowed: ['admin'] },
        { request: { method: 'GET', url: `/api/users/${target.id}/balance/ledger` }, allowed: ['admin'] },
        { request: { method: 'GET', url: '/api/variants/product/p-matrix' }, allowed: ['user', 'manager', 'admin'] },
        { request: { method: 'DELETE', url: '/api/users/00000000-0000-4000-8000-000000000000' }, allowed: ['admin'] },
      ];
      const sessions = { user, manager, admin };
      for (const { request, allowed } of endpoints) {
        const anonymous = await inject(request);
        assert.equal(anonymous.statusCode, 401, `${request.method} ${request.url} without a token`);
        for (const [role, session] of Object.entries(sessions)) {
          const response = await inject({ ...request, headers: session.auth });
          const label = `${request.method} ${request.url} as ${role}`;
          if (allowed.includes(role as 'user')) {
            assert.ok(response.statusCode < 400 || response.statusCode === 404, `${label}: ${response.statusCode}`);
          } else {
            assert.equal(response.statusCode, 403, label);
            assert.equal(problemOf(response).code, 'forbidden');
          }
        }
      }
    });
  });
});
