import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import * as client from 'openid-client';
import { bearer, issueCode, jwtParts, registerApp, type RegisteredApp } from '../helpers/code-grant.js';
import { freePort } from '../helpers/service-process.js';
import { buildTestApp, createUser, loginAdmin, type Session, type TestApp } from '../helpers/test-app.js';

const ALL_SCOPES = ['openid', 'profile', 'email', 'phone', 'offline_access', 'account'];

/** at_hash as a relying party checks it: SHA-256 for RS256, SHA-512 for EdDSA (oauth4webapi's idTokenHash), the left half, base64url. */
function expectedAtHash(accessToken: string, alg: string): string {
  const digest = createHash(alg === 'EdDSA' ? 'sha512' : 'sha256').update(accessToken).digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

/**
 * API.md section 18, "Tokens": the code and refresh grants driven by a certified relying-party
 * library (openid-client 6 over HTTP), which validates every ID token as an app would: a
 * validation it refuses fails the test.
 */
describe('the code and refresh grants, as openid-client drives them', () => {
  let testApp: TestApp;
  let base: string;
  let admin: Session;
  before(async () => {
    const port = Number(await freePort());
    base = `http://127.0.0.1:${port}`;
    testApp = await buildTestApp({ environment: { PUBLIC_URL: base } });
    await testApp.app.listen({ port, host: '127.0.0.1' });
    admin = await loginAdmin(testApp.app);
  });
  after(() => testApp.close());

  const relyingParty = (app: RegisteredApp, alg: 'RS256' | 'EdDSA') =>
    client.discovery(new URL(base), app.id, { id_token_signed_response_alg: alg }, app.secret ? client.ClientSecretBasic(app.secret) : client.None(), {
      execute: [client.allowInsecureRequests],
    });
  const callback = (app: RegisteredApp, code: string, state: string) => new URL(`${app.redirectUri}?code=${code}&state=${state}&iss=${encodeURIComponent(testApp.config.jwtIssuer)}`);

  /** A customer with every claim a scope can show. */
  const customer = async () => {
    const user = await createUser(testApp.app, { name: 'Ada Lovelace' });
    const patched = await testApp.app.inject({ method: 'PATCH', url: '/api/users/profile', headers: user.auth, payload: { phone: '+44 20 7946 0958' } });
    assert.equal(patched.statusCode, 200, patched.body);
    return user;
  };

  for (const [type, alg] of [
    ['confidential', 'RS256'],
    ['confidential', 'EdDSA'],
    ['public', 'RS256'],
    ['public', 'EdDSA'],
  ] as const) {
    it(`exchanges a code and refreshes for a ${type} app whose ID tokens are ${alg}`, async () => {
      const app = await registerApp(testApp.app, admin, { type, alg });
      assert.equal(app.secret === undefined, type === 'public');
      const user = await customer();
      const config = await relyingParty(app, alg);
      const issued = await issueCode(testApp.db, testApp.config, { app, userId: user.id, scopes: ALL_SCOPES, amr: ['pwd', 'otp', 'mfa'] });
      const state = client.randomState();

      const tokens = await client.authorizationCodeGrant(config, callback(app, issued.code, state), {
        pkceCodeVerifier: issued.verifier,
        expectedState: state,
        expectedNonce: issued.nonce,
        idTokenExpected: true,
      });
      assert.equal(tokens.scope, ALL_SCOPES.join(' '));
      assert.equal(tokens.expires_in, testApp.config.accessTokenTtlSeconds);
      assert.equal(typeof tokens.refresh_token, 'string', 'offline_access brings a refresh token');

      const accessClaims = jwtParts(tokens.access_token).payload;
      const claims = tokens.claims()!;
      const { header } = jwtParts(tokens.id_token!);
      assert.deepEqual({ alg: header.alg, typ: header.typ }, { alg, typ: 'JWT' });
      const jwks = (await (await fetch(`${base}/.well-known/jwks.json`)).json()) as { keys: { kid: string; alg: string }[] };
      assert.equal(jwks.keys.find((key) => key.kid === header.kid)?.alg, alg, 'the JWKS publishes the signing key');
      const user_ = await testApp.db.selectFrom('users').selectAll().where('id', '=', user.id).executeTakeFirstOrThrow();
      assert.deepEqual(
        { ...claims, iat: undefined, exp: undefined },
        {
          iss: testApp.config.jwtIssuer,
          sub: user.id,
          aud: app.id,
          iat: undefined,
          exp: undefined,
          auth_time: issued.authTime.getTime() / 1000,
          nonce: issued.nonce,
          sid: accessClaims.sid,
          amr: ['pwd', 'otp', 'mfa'],
          at_hash: expectedAtHash(tokens.access_token, alg),
          email: user.email,
          email_verified: false,
          name: 'Ada Lovelace',
          updated_at: Math.floor(user_.updated_at.getTime() / 1000),
          phone_number: '+44 20 7946 0958',
        },
      );
      assert.equal(claims.exp - claims.iat, testApp.config.accessTokenTtlSeconds);
      assert.deepEqual(
        { sub: accessClaims.sub, client_id: accessClaims.client_id, scope: accessClaims.scope, amr: accessClaims.amr, auth_time: accessClaims.auth_time },
        { sub: user.id, client_id: app.id, scope: ALL_SCOPES.join(' '), amr: ['pwd', 'otp', 'mfa'], auth_time: claims.auth_time },
      );

      // The session of section 3 the exchange started, for the app, from the sign-in.
      const session = await testApp.db.selectFrom('sessions').selectAll().where('id', '=', String(accessClaims.sid)).executeTakeFirstOrThrow();
      assert.deepEqual(
        { user_id: session.user_id, client_id: session.client_id, scopes: session.scopes, signin_session_id: session.signin_session_id, auth_time: session.auth_time.getTime(), amr: session.amr, ended: session.ended_at !== null },
        { user_id: user.id, client_id: app.id, scopes: ALL_SCOPES, signin_session_id: issued.signinSessionId, auth_time: issued.authTime.getTime(), amr: ['pwd', 'otp', 'mfa'], ended: false },
      );
      const code = await testApp.db.selectFrom('authorization_codes').select(['used_at', 'session_id']).where('session_id', '=', session.id).executeTakeFirstOrThrow();
      assert.ok(code.used_at, 'the code is spent');
      assert.equal((await testApp.app.inject({ method: 'GET', url: '/api/users/profile', headers: bearer(tokens.access_token) })).statusCode, 200, 'account opens the own profile');

      // A refresh: the token rotates, a new ID token of the same sign-in comes along, without a nonce.
      const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
      assert.notEqual(refreshed.refresh_token, tokens.refresh_token);
      assert.equal(refreshed.scope, ALL_SCOPES.join(' '));
      const refreshedClaims = refreshed.claims()!;
      assert.deepEqual(
        { sub: refreshedClaims.sub, aud: refreshedClaims.aud, sid: refreshedClaims.sid, auth_time: refreshedClaims.auth_time, nonce: refreshedClaims.nonce, amr: refreshedClaims.amr },
        { sub: user.id, aud: app.id, sid: accessClaims.sid, auth_time: claims.auth_time, nonce: undefined, amr: ['pwd', 'otp', 'mfa'] },
      );
      assert.equal(refreshedClaims.at_hash, expectedAtHash(refreshed.access_token, alg));
      assert.equal(jwtParts(refreshed.id_token!).header.alg, alg);

      // A narrower scope narrows the new access token only; the refresh token keeps coming, the session keeps its scopes.
      const narrowed = await client.refreshTokenGrant(config, refreshed.refresh_token!, { scope: 'openid email' });
      assert.equal(narrowed.scope, 'openid email');
      assert.equal(jwtParts(narrowed.access_token).payload.scope, 'openid email');
      assert.equal(typeof narrowed.refresh_token, 'string');
      assert.equal(narrowed.claims()!.email, user.email, "the ID token keeps the session's claims");
      const narrowedProfile = await testApp.app.inject({ method: 'GET', url: '/api/users/profile', headers: bearer(narrowed.access_token) });
      assert.equal(narrowedProfile.statusCode, 403, 'the narrowed token lacks account');
      const again = await client.refreshTokenGrant(config, narrowed.refresh_token!);
      assert.equal(again.scope, ALL_SCOPES.join(' '), 'the next refresh may ask them all');
      const kept = await testApp.db.selectFrom('sessions').select('scopes').where('id', '=', session.id).executeTakeFirstOrThrow();
      assert.deepEqual(kept.scopes, ALL_SCOPES);
    });
  }

  it('issues no refresh token without offline_access, and no ID token without openid', async () => {
    const app = await registerApp(testApp.app, admin, { type: 'public' });
    const user = await customer();
    const config = await relyingParty(app, 'RS256');

    const signIn = await issueCode(testApp.db, testApp.config, { app, userId: user.id, scopes: ['openid', 'email'] });
    const state = client.randomState();
    const tokens = await client.authorizationCodeGrant(config, callback(app, signIn.code, state), { pkceCodeVerifier: signIn.verifier, expectedState: state, expectedNonce: signIn.nonce });
    assert.equal(tokens.refresh_token, undefined);
    assert.equal(tokens.scope, 'openid email');
    assert.deepEqual(Object.keys(tokens.claims()!).filter((name) => ['email', 'email_verified', 'name', 'phone_number'].includes(name)).sort(), ['email', 'email_verified']);
    // Nothing can renew it: the session lasts as long as its access token.
    const sid = String(jwtParts(tokens.access_token).payload.sid);
    const session = await testApp.db.selectFrom('sessions').select(['expires_at', 'created_at']).where('id', '=', sid).executeTakeFirstOrThrow();
    assert.equal(session.expires_at.getTime() - session.created_at.getTime(), testApp.config.accessTokenTtlSeconds * 1000);
    assert.equal(await testApp.db.selectFrom('refresh_tokens').select('id').where('family_id', '=', sid).executeTakeFirst(), undefined);

    const accountOnly = await issueCode(testApp.db, testApp.config, { app, userId: user.id, scopes: ['account', 'offline_access'], nonce: null });
    const accountState = client.randomState();
    const plain = await client.authorizationCodeGrant(config, callback(app, accountOnly.code, accountState), { pkceCodeVerifier: accountOnly.verifier, expectedState: accountState });
    assert.equal(plain.id_token, undefined);
    assert.equal(typeof plain.refresh_token, 'string');
    assert.equal((await testApp.app.inject({ method: 'GET', url: '/api/users/profile', headers: bearer(plain.access_token) })).statusCode, 200);
    const refreshed = await client.refreshTokenGrant(config, plain.refresh_token!);
    assert.equal(refreshed.id_token, undefined);
  });

  it('fails openid-client\'s own checks when the nonce is not the one it sent (the ID token carries the code\'s)', async () => {
    const app = await registerApp(testApp.app, admin, { type: 'confidential' });
    const user = await customer();
    const config = await relyingParty(app, 'RS256');
    const issued = await issueCode(testApp.db, testApp.config, { app, userId: user.id, scopes: ['openid'] });
    const state = client.randomState();
    await assert.rejects(
      client.authorizationCodeGrant(config, callback(app, issued.code, state), { pkceCodeVerifier: issued.verifier, expectedState: state, expectedNonce: randomBytes(8).toString('hex') }),
      (error: Error) => /"nonce" claim/.test(String((error.cause as Error | undefined)?.message)),
    );
  });
});
