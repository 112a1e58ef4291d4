import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as client from 'openid-client';
import { bearer, registerApp, type RegisteredApp } from '../helpers/code-grant.js';
import { PageBrowser, signInByPassword } from '../helpers/page-browser.js';
import { freePort } from '../helpers/service-process.js';
import { buildTestApp, createUser, loginAdmin, type Session, type TestApp } from '../helpers/test-app.js';

const SCOPES = ['openid', 'profile', 'email', 'offline_access', 'account'];

/**
 * API.md section 18 end to end, as issue 53 asks it tested: a certified relying-party library
 * (openid-client 6) drives discovery, the authorization request with PKCE, the code exchange and
 * ID token validation, userinfo, refresh, introspection, revocation and logout against the
 * running service; the browser's part is done by following the hosted pages' forms, as a
 * password manager or a script does. A validation openid-client refuses fails the test.
 */
describe('signing a customer in through the hosted pages, driven by openid-client', () => {
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

  /** The authorization request as the app sends the browser, and what it keeps to check the answer. */
  const authorizationRequest = async (config: client.Configuration, app: RegisteredApp) => {
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: app.redirectUri,
      scope: SCOPES.join(' '),
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return { url, verifier, state, nonce };
  };

  for (const [type, alg] of [
    ['public', 'RS256'],
    ['confidential', 'EdDSA'],
  ] as const) {
    it(`signs in a ${type} app's customer (${alg} ID tokens), then userinfo, refresh, revocation and logout`, async () => {
      const app = await registerApp(testApp.app, admin, { type, alg, scopes: SCOPES, redirectUri: 'http://127.0.0.1/callback' });
      const firstParty = await testApp.app.inject({ method: 'PATCH', url: `/api/clients/${app.id}`, headers: { ...admin.auth, 'content-type': 'application/merge-patch+json' }, payload: { first_party: true, post_logout_redirect_uris: ['http://127.0.0.1/signed-out'] } });
      assert.equal(firstParty.statusCode, 200, firstParty.body);
      const customer = await createUser(testApp.app, { name: 'Grace Hopper' });
      const config = await relyingParty(app, alg);
      assert.equal(config.serverMetadata().issuer, testApp.config.jwtIssuer);

      const request = await authorizationRequest(config, app);
      const browser = new PageBrowser(testApp.app);
      const pathOf = (url: URL) => `${url.pathname}${url.search}`;
      const back = await signInByPassword(browser, pathOf(request.url), customer.email, customer.password);
      assert.equal(back.statusCode, 303, back.body.slice(0, 500));
      const location = String(back.headers.location);
      assert.ok(location.startsWith('http://127.0.0.1/callback?'), location);

      const tokens = await client.authorizationCodeGrant(config, new URL(location), {
        pkceCodeVerifier: request.verifier,
        expectedState: request.state,
        expectedNonce: request.nonce,
        idTokenExpected: true,
      });
      const claims = tokens.claims()!;
      assert.equal(claims.sub, customer.id);
      assert.equal(claims.email, customer.email);
      assert.equal(claims.name, 'Grace Hopper');
      assert.deepEqual(claims.amr, ['pwd']);
      assert.equal(typeof claims.sid, 'string');
      assert.equal(tokens.scope, SCOPES.join(' '));

      const userinfo = await client.fetchUserInfo(config, tokens.access_token, customer.id);
      assert.equal(userinfo.email, customer.email);
      assert.equal((await testApp.app.inject({ method: 'GET', url: '/api/users/profile', headers: bearer(tokens.access_token) })).statusCode, 200, '`account` opens the own profile');

      const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
      assert.notEqual(refreshed.refresh_token, tokens.refresh_token, 'the refresh token rotates');
      assert.equal(refreshed.claims()?.sub, customer.id);

      if (app.secret) {
        const introspection = await client.tokenIntrospection(config, refreshed.access_token);
        assert.equal(introspection.active, true);
        assert.equal(introspection.sub, customer.id);
        assert.equal(introspection.client_id, app.id);
      }

      // A second sign-in in the same browser needs no password: the sign-in session's cookie does.
      const again = await authorizationRequest(config, app);
      const silent = await browser.get(`${pathOf(again.url)}&prompt=none`);
      assert.equal(silent.statusCode, 303);
      const second = await client.authorizationCodeGrant(config, new URL(String(silent.headers.location)), { pkceCodeVerifier: again.verifier, expectedState: again.state, expectedNonce: again.nonce });
      assert.equal(second.claims()?.sub, customer.id);

      await client.tokenRevocation(config, refreshed.refresh_token!);
      assert.equal((await testApp.app.inject({ method: 'GET', url: '/api/users/profile', headers: bearer(refreshed.access_token) })).statusCode, 401, 'revoking ends the session at once');
      assert.equal((await testApp.app.inject({ method: 'GET', url: '/api/users/profile', headers: bearer(second.access_token) })).statusCode, 200, "the app's other session lives on");

      const logout = client.buildEndSessionUrl(config, { id_token_hint: second.id_token!, post_logout_redirect_uri: 'http://127.0.0.1/signed-out', state: 'bye' });
      const signedOut = await browser.get(pathOf(logout));
      assert.equal(signedOut.statusCode, 303);
      assert.equal(signedOut.headers.location, 'http://127.0.0.1/signed-out?state=bye');
      assert.equal((await testApp.app.inject({ method: 'GET', url: '/api/users/profile', headers: bearer(second.access_token) })).statusCode, 401, 'logout ends the app sessions of the sign-in');
      const afterLogout = await authorizationRequest(config, app);
      const none = await browser.get(`${pathOf(afterLogout.url)}&prompt=none`);
      assert.equal(new URL(String(none.headers.location)).searchParams.get('error'), 'login_required', 'the sign-in session ended too');
    });
  }
});
