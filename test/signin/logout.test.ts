import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { hashBrowserSecret } from '../../src/signin/signin-service.js';
import { createTokenIssuer } from '../../src/sessions/token-issuer.js';
import { openSession, PASSWORD_ONLY } from '../../src/sessions/token-pairs.js';
import { buildTestApp, createUser, useAppWithAdmin, type Session } from '../helpers/test-app.js';

const REDIRECT = 'https://shop.example.com/callback';
const AFTER_LOGOUT = 'https://shop.example.com/signed-out';
const DEVICE = { userAgent: 'test', ip: '127.0.0.1' };

/** A page's CSRF token and the cookies it set, as a browser would keep them. */
function formOf(reply: { body: string; headers: Record<string, unknown> }) {
  const token = /name="csrf_token" value="([^"]+)"/.exec(reply.body)?.[1];
  const setCookie = ([] as string[]).concat((reply.headers['set-cookie'] as string | string[] | undefined) ?? []);
  return { token, cookies: setCookie.map((line) => line.split(';')[0]!) };
}

/** API.md section 18, "Logout": RP-initiated logout ends the sign-in session and every session it started for apps. */
describe('RP-initiated logout (/oauth/logout)', () => {
  const fixture = useAppWithAdmin();

  const createApp = async (postLogout: string[] = [AFTER_LOGOUT]) => {
    const reply = await fixture.app.inject({
      method: 'POST',
      url: '/api/clients',
      headers: fixture.admin.auth,
      payload: { name: 'Storefront', type: 'confidential', redirect_uris: [REDIRECT], post_logout_redirect_uris: postLogout, scopes: ['openid', 'account'] },
    });
    assert.equal(reply.statusCode, 201, reply.body);
    return reply.json().id as string;
  };

  /** What the hosted pages and a code exchange leave behind: a browser's sign-in session, and two sessions it started for the app. */
  const signedInThroughPages = async (user: Session, clientId: string) => {
    const issuer = createTokenIssuer(fixture.testApp.config, undefined);
    const browserSecret = randomBytes(32).toString('base64url');
    const signIn = await openSession(fixture.db, issuer, user.id, DEVICE, PASSWORD_ONLY, undefined, { browserSecretHash: hashBrowserSecret(browserSecret), lifetimeSeconds: 3600 });
    const grant = { clientId, scopes: ['openid', 'account'] };
    const first = await openSession(fixture.db, issuer, user.id, DEVICE, PASSWORD_ONLY, grant, { signinSessionId: signIn.session.id });
    const second = await openSession(fixture.db, issuer, user.id, DEVICE, PASSWORD_ONLY, grant, { signinSessionId: signIn.session.id });
    const idToken = fixture.testApp.idTokens.signIdToken(
      { iss: fixture.testApp.config.jwtIssuer, sub: user.id, aud: clientId, sid: first.session.id, exp: Math.floor(Date.now() / 1000) - 60, iat: Math.floor(Date.now() / 1000) - 3600 },
      'RS256',
    );
    return { browserSecret, signIn: signIn.session.id, sessions: [first.session.id, second.session.id], appToken: first.pair.access_token, idToken };
  };
  const endedOf = async (ids: string[]) => (await fixture.db.selectFrom('sessions').select(['id', 'ended_at']).where('id', 'in', ids).execute()).map((row) => row.ended_at !== null);
  const profileStatus = async (token: string) => (await fixture.app.inject({ method: 'GET', url: '/api/users/profile', headers: { authorization: `Bearer ${token}` } })).statusCode;

  it("with an id_token_hint (expired) and a registered URI: ends the hint's session, its sign-in session and every session that started, then redirects with state", async () => {
    const clientId = await createApp();
    const user = await createUser(fixture.app);
    const signedIn = await signedInThroughPages(user, clientId);
    assert.equal(await profileStatus(signedIn.appToken), 200);
    const query = new URLSearchParams({ id_token_hint: signedIn.idToken, post_logout_redirect_uri: AFTER_LOGOUT, state: 'af0ifjsldkj' });
    const reply = await fixture.app.inject({ method: 'GET', url: `/oauth/logout?${query}`, headers: { cookie: `shop_sid=${signedIn.browserSecret}` } });
    assert.equal(reply.statusCode, 303, reply.body);
    assert.equal(reply.headers.location, `${AFTER_LOGOUT}?state=af0ifjsldkj`);
    assert.equal(reply.headers['cache-control'], 'no-store');
    assert.match(String(reply.headers['set-cookie']), /^shop_sid=; Path=\/; Max-Age=0; HttpOnly; SameSite=Lax/, 'the sign-in cookie is cleared');
    assert.deepEqual(await endedOf([signedIn.signIn, ...signedIn.sessions]), [true, true, true]);
    assert.equal(await profileStatus(signedIn.appToken), 401, "the app's access token fails on the very next request");
    const revoked = await fixture.db.selectFrom('refresh_tokens').select('revoked_at').where('family_id', 'in', signedIn.sessions).execute();
    assert.ok(revoked.every((row) => row.revoked_at !== null), 'their refresh tokens are revoked');
    const events = await fixture.db.selectFrom('events').select('data').where('type', '=', 'user.sessions_ended').where('subject_id', '=', user.id).execute();
    assert.deepEqual(events.flatMap((event) => (event.data as { session_ids: string[] }).session_ids).sort(), [signedIn.signIn, ...signedIn.sessions].sort());
  });

  it('without the cookie still ends what the hint names; an unregistered URI shows the signed-out page, never a redirect', async () => {
    const clientId = await createApp();
    const user = await createUser(fixture.app);
    const signedIn = await signedInThroughPages(user, clientId);
    const query = new URLSearchParams({ id_token_hint: signedIn.idToken, post_logout_redirect_uri: 'https://evil.example/', state: 's' });
    const reply = await fixture.app.inject({ method: 'GET', url: `/oauth/logout?${query}` });
    assert.equal(reply.statusCode, 200);
    assert.equal(reply.headers.location, undefined);
    assert.match(String(reply.headers['content-type']), /^text\/html/);
    assert.match(reply.body, /<h1>You are signed out<\/h1>/);
    assert.match(String(reply.headers['content-security-policy']), /frame-ancestors 'none'/);
    assert.deepEqual(await endedOf([signedIn.signIn, ...signedIn.sessions]), [true, true, true]);
  });

  it("does not end the browser's sign-in with another user's hint: that needs the confirmation", async () => {
    const clientId = await createApp();
    const attacker = await signedInThroughPages(await createUser(fixture.app), clientId);
    const victim = await signedInThroughPages(await createUser(fixture.app), clientId);
    const query = new URLSearchParams({ id_token_hint: attacker.idToken, post_logout_redirect_uri: AFTER_LOGOUT });
    const reply = await fixture.app.inject({ method: 'GET', url: `/oauth/logout?${query}`, headers: { cookie: `shop_sid=${victim.browserSecret}` } });
    assert.equal(reply.statusCode, 200);
    assert.equal(reply.headers.location, undefined);
    assert.match(reply.body, /<button type="submit" name="action" value="logout">/, 'the page asks');
    assert.doesNotMatch(String(reply.headers['set-cookie'] ?? ''), /shop_sid=;/, "the victim's cookie stays");
    assert.deepEqual(await endedOf([victim.signIn, ...victim.sessions]), [false, false, false], "the victim's sign-in lives on");
    assert.deepEqual(await endedOf([attacker.signIn, ...attacker.sessions]), [true, true, true], 'what the hint names ends');
  });

  it('refuses a hint it did not issue, or one for another app than client_id: a 400 page, nothing ends', async () => {
    const clientId = await createApp();
    const user = await createUser(fixture.app);
    const signedIn = await signedInThroughPages(user, clientId);
    const [header, payload] = signedIn.idToken.split('.');
    const forged = `${header}.${payload}.${Buffer.from('not the signature').toString('base64url')}`;
    const hints: Record<string, string>[] = [{ id_token_hint: forged }, { id_token_hint: signedIn.idToken, client_id: await createApp() }, { id_token_hint: 'not-a-jwt' }];
    for (const query of hints) {
      const reply = await fixture.app.inject({ method: 'GET', url: `/oauth/logout?${new URLSearchParams({ ...query, post_logout_redirect_uri: AFTER_LOGOUT })}` });
      assert.equal(reply.statusCode, 400, JSON.stringify(query));
      assert.equal(reply.headers.location, undefined);
    }
    assert.deepEqual(await endedOf([signedIn.signIn, ...signedIn.sessions]), [false, false, false]);
  });

  it('without a hint asks first; the confirmation needs its CSRF token, then ends the browser\'s sign-in and redirects to the app\'s registered URI', async () => {
    const clientId = await createApp();
    const user = await createUser(fixture.app);
    const signedIn = await signedInThroughPages(user, clientId);
    const query = new URLSearchParams({ client_id: clientId, post_logout_redirect_uri: AFTER_LOGOUT, state: 'xyz', ui_locales: 'de' });
    const page = await fixture.app.inject({ method: 'GET', url: `/oauth/logout?${query}`, headers: { cookie: `shop_sid=${signedIn.browserSecret}` } });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-security-policy']), /form-action 'self' https:\/\/shop\.example\.com;/, 'the post may end at the registered URI');
    assert.equal((await fixture.app.inject({ method: 'HEAD', url: `/oauth/logout?${query}` })).statusCode, 405, 'no HEAD: a prefetch ends nothing');
    assert.match(page.body, /<html lang="de">/);
    assert.match(page.body, /<h1>Von Shop abmelden\?<\/h1>/);
    assert.match(page.body, /<button type="submit" name="action" value="logout">/);
    assert.deepEqual(await endedOf([signedIn.signIn]), [false], 'asking ends nothing');
    const { token, cookies } = formOf(page);
    assert.ok(token);
    const cookie = [`shop_sid=${signedIn.browserSecret}`, ...cookies].join('; ');
    const post = (body: string, headers: Record<string, string> = {}) =>
      fixture.app.inject({ method: 'POST', url: `/oauth/logout?${query}`, headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers }, payload: body });

    assert.equal((await post('action=logout')).statusCode, 403, 'no CSRF token');
    assert.equal((await post(`action=logout&csrf_token=${'A'.repeat(43)}`)).statusCode, 403, 'another token');
    assert.equal((await post(`action=logout&csrf_token=${token}`, { 'sec-fetch-site': 'cross-site' })).statusCode, 403, 'a cross-site post');
    assert.deepEqual(await endedOf([signedIn.signIn, ...signedIn.sessions]), [false, false, false], 'a refused post changes nothing');

    const confirmed = await post(`action=logout&csrf_token=${token}`);
    assert.equal(confirmed.statusCode, 303, confirmed.body);
    assert.equal(confirmed.headers.location, `${AFTER_LOGOUT}?state=xyz`);
    assert.deepEqual(await endedOf([signedIn.signIn, ...signedIn.sessions]), [true, true, true]);
  });

  it('answers a malformed request with a page, never problem+json', async () => {
    const repeated = await fixture.app.inject({ method: 'GET', url: '/oauth/logout?state=a&state=b' });
    assert.equal(repeated.statusCode, 400);
    assert.match(String(repeated.headers['content-type']), /^text\/html/);
    assert.match(repeated.body, /<h1>Something is not right<\/h1>/);
  });

  it('is off (404) while the issuer is not https', async () => {
    const off = await buildTestApp({ environment: { PUBLIC_URL: 'http://shop.example' } });
    try {
      assert.equal(off.config.authorizationServer, false);
      assert.equal((await off.app.inject({ method: 'GET', url: '/oauth/logout' })).statusCode, 404);
    } finally {
      await off.close();
    }
  });
});
