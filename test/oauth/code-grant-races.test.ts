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
});
