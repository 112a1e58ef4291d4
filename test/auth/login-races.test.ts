import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createAccountToken } from '../../src/users/account-token-repository.js';
import { createUser, onPostgres, useTwoInstancesWithAdmin, type Session } from '../helpers/test-app.js';

const ROUNDS = 6;
const LOGINS = 6;

type Change = (user: Session, admin: Session) => Promise<void>;

/**
 * API.md section 10, "Credentials change atomically": logins with the old password race a
 * change of the same user, on two instances; afterwards no session that a racing login started
 * may still work, and the user's only open session is the one a password change itself starts.
 */
describe('a login in flight never outlives a password change, reset, suspension or deletion (PostgreSQL, two instances)', { skip: !onPostgres && 'races need PostgreSQL' }, () => {
  const fixture = useTwoInstancesWithAdmin();
  const apps = () => [fixture.first.app, fixture.second.app];

  async function race(change: Change, after?: (user: Session, admin: Session) => Promise<void>) {
    let survivors = 0;
    let started = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const user = await createUser(fixture.first.app, { name: `Racer ${round}` });
      const logins = Array.from({ length: LOGINS }, (_, index) =>
        apps()[index % 2]!.inject({ method: 'POST', url: '/api/auth/login', payload: { email: user.email, password: user.password } }),
      );
      await Promise.all([change(user, fixture.admin), ...logins]);
      await after?.(user, fixture.admin);
      for (const login of await Promise.all(logins)) {
        if (login.statusCode !== 200) {
          assert.ok([401, 403].includes(login.statusCode), `a racing login answers 200, 401 or 403, not ${login.statusCode}`);
          continue;
        }
        started++;
        const tokens = login.json();
        for (const app of apps()) {
          const profile = await app.inject({ method: 'GET', url: '/api/users/profile', headers: { authorization: `Bearer ${tokens.access_token}` } });
          if (profile.statusCode === 200) survivors++;
        }
        const refreshed = await apps()[1]!.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: tokens.refresh_token } });
        if (refreshed.statusCode === 200) survivors++;
      }
    }
    return { survivors, started };
  }

  it('password change', async () => {
    const ownSessions: string[] = [];
    const outcome = await race(
      async (user) => {
        const changed = await fixture.second.app.inject({
          method: 'PUT',
          url: '/api/users/change-password',
          headers: user.auth,
          payload: { current_password: user.password, new_password: 'a-new-password-9' },
        });
        assert.equal(changed.statusCode, 200);
        ownSessions.push(changed.json().access_token);
      },
    );
    assert.equal(outcome.survivors, 0, `${outcome.survivors} uses of sessions from ${outcome.started} racing logins worked after the change`);
    for (const token of ownSessions) {
      const own = await fixture.first.app.inject({ method: 'GET', url: '/api/users/profile', headers: { authorization: `Bearer ${token}` } });
      assert.equal(own.statusCode, 200, 'the session the change started works');
    }
  });

  it('password reset', async () => {
    const outcome = await race(async (user) => {
      const token = await createAccountToken(fixture.first.db, { userId: user.id, purpose: 'password_reset', email: user.email, ttlSeconds: 600 });
      const reset = await fixture.second.app.inject({ method: 'POST', url: '/api/auth/password-reset/confirm', payload: { token: token.value, new_password: 'a-new-password-9' } });
      assert.equal(reset.statusCode, 204);
    });
    assert.equal(outcome.survivors, 0, `${outcome.survivors} uses of sessions from ${outcome.started} racing logins worked after the reset`);
  });

  it('suspension, then reactivation', async () => {
    const setStatus = (app: FastifyInstance, user: Session, admin: Session, status: string) =>
      app.inject({ method: 'PUT', url: `/api/users/${user.id}/status`, headers: admin.auth, payload: { status } });
    const outcome = await race(
      async (user, admin) => assert.equal((await setStatus(fixture.second.app, user, admin, 'suspended')).statusCode, 200),
      async (user, admin) => assert.equal((await setStatus(fixture.first.app, user, admin, 'active')).statusCode, 200),
    );
    assert.equal(outcome.survivors, 0, `${outcome.survivors} uses of sessions from ${outcome.started} racing logins worked after reactivation`);
  });

  it('deletion', async () => {
    const outcome = await race(async (user, admin) => {
      assert.equal((await fixture.second.app.inject({ method: 'DELETE', url: `/api/users/${user.id}`, headers: admin.auth })).statusCode, 204);
    });
    assert.equal(outcome.survivors, 0, `${outcome.survivors} uses of sessions from ${outcome.started} racing logins worked after the deletion`);
  });

  it('refreshes racing a suspension leave no working token after reactivation', async () => {
    let survivors = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const user = await createUser(fixture.first.app);
      const sessions = await Promise.all(
        Array.from({ length: 3 }, () => fixture.first.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: user.email, password: user.password } })),
      );
      const refreshes = sessions.map((session, index) =>
        apps()[index % 2]!.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: session.json().refresh_token } }),
      );
      await Promise.all([
        fixture.second.app.inject({ method: 'PUT', url: `/api/users/${user.id}/status`, headers: fixture.admin.auth, payload: { status: 'suspended' } }),
        ...refreshes,
      ]);
      await fixture.first.app.inject({ method: 'PUT', url: `/api/users/${user.id}/status`, headers: fixture.admin.auth, payload: { status: 'active' } });
      for (const refreshed of await Promise.all(refreshes)) {
        if (refreshed.statusCode !== 200) continue;
        const profile = await fixture.second.app.inject({ method: 'GET', url: '/api/users/profile', headers: { authorization: `Bearer ${refreshed.json().access_token}` } });
        if (profile.statusCode === 200) survivors++;
      }
    }
    assert.equal(survivors, 0);
  });

  it('leaves the user no open session but the one a password change starts', async () => {
    const user = await createUser(fixture.first.app);
    const logins = Array.from({ length: LOGINS }, (_, index) =>
      apps()[index % 2]!.inject({ method: 'POST', url: '/api/auth/login', payload: { email: user.email, password: user.password } }),
    );
    const [changed] = await Promise.all([
      fixture.second.app.inject({ method: 'PUT', url: '/api/users/change-password', headers: user.auth, payload: { current_password: user.password, new_password: 'a-new-password-9' } }),
      ...logins,
    ]);
    const open = await fixture.first.db.selectFrom('sessions').select('id').where('user_id', '=', user.id).where('ended_at', 'is', null).execute();
    const sid = JSON.parse(Buffer.from(changed.json().access_token.split('.')[1], 'base64url').toString()).sid;
    assert.deepEqual(open.map((row) => row.id), [sid]);
  });
});
