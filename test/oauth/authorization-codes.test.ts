import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hashAuthorizationCode, issueAuthorizationCode } from '../../src/oauth/authorization-codes.js';
import { createTokenIssuer } from '../../src/sessions/token-issuer.js';
import { openSession } from '../../src/sessions/token-pairs.js';
import { createUser, useAppWithAdmin } from '../helpers/test-app.js';

/** API.md section 18, "Codes": 43 base64url characters, 60 seconds, kept only as a hash, purged a day after they lapse. */
describe('authorization codes', () => {
  const fixture = useAppWithAdmin();

  it('are 43 base64url characters, stored only as their SHA-256 with what they are bound to, and purged a day after they lapse', async () => {
    const app = await fixture.app.inject({
      method: 'POST',
      url: '/api/clients',
      headers: fixture.admin.auth,
      payload: { name: 'Storefront', type: 'public', redirect_uris: ['https://shop.example.com/callback'], scopes: ['openid'] },
    });
    assert.equal(app.statusCode, 201, app.body);
    const user = await createUser(fixture.app);
    const signIn = await openSession(fixture.db, createTokenIssuer(fixture.testApp.config, undefined), user.id, { userAgent: 'test', ip: '127.0.0.1' });
    const grant = {
      clientId: app.json().id as string,
      userId: user.id,
      redirectUri: 'https://shop.example.com/callback',
      codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      nonce: 'n-0S6_WzA2Mj',
      scopes: ['openid'],
      signinSessionId: signIn.session.id,
      authTime: new Date(),
      amr: ['pwd'],
    };
    const before = Date.now();
    const [fresh, lapsed, lapsedLongAgo] = [await issueAuthorizationCode(fixture.db, grant), await issueAuthorizationCode(fixture.db, grant), await issueAuthorizationCode(fixture.db, grant)];
    for (const code of [fresh, lapsed, lapsedLongAgo]) assert.match(code, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(new Set([fresh, lapsed, lapsedLongAgo]).size, 3);

    const row = await fixture.db.selectFrom('authorization_codes').selectAll().where('code_hash', '=', hashAuthorizationCode(fresh)).executeTakeFirstOrThrow();
    assert.equal((await fixture.db.selectFrom('authorization_codes').select('id').where('code_hash', '=', fresh).execute()).length, 0, 'never the code itself');
    assert.equal(row.client_id, grant.clientId);
    assert.equal(row.redirect_uri, grant.redirectUri);
    assert.equal(row.code_challenge, grant.codeChallenge);
    assert.equal(row.nonce, grant.nonce);
    assert.equal(row.signin_session_id, signIn.session.id);
    assert.equal(row.used_at, null);
    const lifetime = row.expires_at.getTime() - before;
    assert.ok(lifetime > 59_000 && lifetime <= 61_000, `valid 60 seconds (${lifetime} ms)`);

    const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3_600_000);
    await fixture.db.updateTable('authorization_codes').set({ expires_at: hoursAgo(2) }).where('code_hash', '=', hashAuthorizationCode(lapsed)).execute();
    await fixture.db.updateTable('authorization_codes').set({ expires_at: hoursAgo(25) }).where('code_hash', '=', hashAuthorizationCode(lapsedLongAgo)).execute();
    await fixture.jobs.runNow('purge-authorization-codes');
    const left = await fixture.db.selectFrom('authorization_codes').select('code_hash').where('signin_session_id', '=', signIn.session.id).execute();
    assert.deepEqual(left.map((code) => code.code_hash).sort(), [hashAuthorizationCode(fresh), hashAuthorizationCode(lapsed)].sort(), 'only the code a day past its expiry goes');
  });
});
