import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FORM, form, issueCode, jwtParts, registerApp, type RegisteredApp } from '../helpers/code-grant.js';
import { buildTestApp, createUser, loginAdmin, onPostgres, type Session, type TestApp } from '../helpers/test-app.js';

// PGlite is one connection, so races need a real server.
describe('code exchanges racing (PostgreSQL)', { skip: !onPostgres && 'needs PostgreSQL' }, () => {
  let testApp: TestApp;
  let admin: Session;
  before(async () => {
    testApp = await buildTestApp();
    admin = await loginAdmin(testApp.app);
  });
  after(() => testApp?.close());

  const exchange = (app: RegisteredApp, code: string, verifier: string) =>
    testApp.app.inject({ method: 'POST', url: '/api/oauth/token', headers: FORM, payload: form({ grant_type: 'authorization_code', code, redirect_uri: app.redirectUri, code_verifier: verifier, client_id: app.id }) });

  it('lets exactly one of three simultaneous exchanges of one code succeed, and the others end its session (20 rounds)', async () => {
    const app = await registerApp(testApp.app, admin, { type: 'public' });
    const user = await createUser(testApp.app);
    for (let round = 0; round < 20; round++) {
      const issued = await issueCode(testApp.db, testApp.config, { app, userId: user.id, scopes: ['openid', 'offline_access', 'account'] });
      const replies = await Promise.all([1, 2, 3].map(() => exchange(app, issued.code, issued.verifier)));
      const granted = replies.filter((reply) => reply.statusCode === 200);
      assert.equal(granted.length, 1, `round ${round}: ${replies.map((reply) => `${reply.statusCode} ${reply.body}`).join(' | ')}`);
      for (const reply of replies.filter((candidate) => candidate.statusCode !== 200)) {
        assert.deepEqual([reply.statusCode, reply.json().error], [400, 'invalid_grant'], `round ${round}`);
      }
      // One session for the code, the winner's; the losers were replays, which ended it (RFC 9700).
      const sid = String(jwtParts(granted[0]!.json().access_token).payload.sid);
      const code = await testApp.db.selectFrom('authorization_codes').select(['session_id', 'used_at']).where('session_id', '=', sid).executeTakeFirstOrThrow();
      assert.ok(code.used_at);
      const sessions = await testApp.db.selectFrom('sessions').select(['id', 'ended_at']).where('signin_session_id', '=', issued.signinSessionId).execute();
      assert.deepEqual(sessions.map((session) => session.id), [sid], `round ${round}: one session started`);
      assert.ok(sessions[0]!.ended_at, `round ${round}: the replays ended it`);
    }
  });

  it('leaves no live session when a password change on another instance races the exchange (10 rounds)', async () => {
    const second = await buildTestApp({ databaseUrl: testApp.databaseUrl });
    try {
      const app = await registerApp(testApp.app, admin, { type: 'public' });
      for (let round = 0; round < 10; round++) {
        const user = await createUser(testApp.app);
        const issued = await issueCode(testApp.db, testApp.config, { app, userId: user.id, scopes: ['openid', 'offline_access', 'account'] });
        const [exchanged, changed] = await Promise.all([
          exchange(app, issued.code, issued.verifier),
          second.app.inject({ method: 'PUT', url: '/api/users/change-password', headers: user.auth, payload: { current_password: user.password, new_password: `another-password-${round}` } }),
        ]);
        assert.equal(changed.statusCode, 200, changed.body);
        assert.ok(exchanged.statusCode === 200 || (exchanged.statusCode === 400 && exchanged.json().error === 'invalid_grant'), `round ${round}: ${exchanged.statusCode} ${exchanged.body}`);
        // Whichever came first, the change ends the sign-in and every session an app started from it (API.md section 10).
        const live = await testApp.db.selectFrom('sessions').select('id').where('user_id', '=', user.id).where('ended_at', 'is', null).where('client_id', 'is not', null).execute();
        assert.deepEqual(live, [], `round ${round}: an app session outlived the password change (exchange ${exchanged.statusCode})`);
        if (exchanged.statusCode === 200) {
          const profile = await second.app.inject({ method: 'GET', url: '/api/users/profile', headers: { authorization: `Bearer ${exchanged.json().access_token}` } });
          assert.equal(profile.statusCode, 401, `round ${round}: its token is refused on the very next request`);
        }
      }
    } finally {
      await second.close();
    }
  });
});
