import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { hashBrowserSecret } from '../../src/signin/signin-service.js';
import { PageBrowser, pkcePair } from '../helpers/page-browser.js';
import { SoftwareAuthenticator, type RequestOptions } from '../helpers/software-authenticator.js';
import { buildTestApp, createUser, loginAdmin, type Session, type TestApp } from '../helpers/test-app.js';
import { enrolTotp, registerPasskey } from '../mfa/mfa-helpers.js';

const ISSUER = 'https://accounts.example.test';
const RP_ID = 'accounts.example.test';
const CALLBACK = 'https://shop.example.com/callback';

/** The request options the sign-in page's form carries in `data-webauthn-options` (HTML-unescaped). */
function webauthnOptionsOf(html: string): RequestOptions & Record<string, unknown> {
  const attribute = /<form[^>]* data-webauthn-options="([^"]+)"/.exec(html)?.[1];
  if (!attribute) throw new Error('no passkey options on the page');
  return JSON.parse(attribute.replace(/&quot;/g, '"').replace(/&amp;/g, '&'));
}

/** API.md sections 18 and 19: a passkey on the hosted sign-in page, posted as a script would post it. */
describe('sign-in by passkey on the hosted sign-in page', () => {
  let testApp: TestApp;
  let authorizeUrl: string;

  before(async () => {
    testApp = await buildTestApp({ environment: { PUBLIC_URL: ISSUER } });
    const admin = await loginAdmin(testApp.app);
    const created = await testApp.app.inject({
      method: 'POST',
      url: '/api/clients',
      headers: admin.auth,
      payload: { name: 'Acme storefront', type: 'public', first_party: true, redirect_uris: [CALLBACK], scopes: ['openid', 'email'] },
    });
    assert.equal(created.statusCode, 201, created.body);
    authorizeUrl = `/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: created.json().id, redirect_uri: CALLBACK, scope: 'openid email', state: 'st', code_challenge: pkcePair().challenge, code_challenge_method: 'S256' })}`;
  });
  after(async () => {
    await testApp.close();
  });

  async function userWithPasskey(): Promise<{ user: Session; authenticator: SoftwareAuthenticator }> {
    const user = await createUser(testApp.app);
    const authenticator = new SoftwareAuthenticator(ISSUER, RP_ID);
    const registered = await registerPasskey(testApp.app, user, authenticator);
    assert.equal(registered.statusCode, 201, registered.body);
    return { user, authenticator };
  }

  /** The sign-in session the browser's cookie names, as stored. */
  async function signinSessionOf(browser: PageBrowser) {
    const secret = browser.cookies.get('__Host-shop_sid')?.value;
    assert.ok(secret, 'the sign-in session cookie');
    return testApp.db.selectFrom('sessions').selectAll().where('browser_secret_hash', '=', hashBrowserSecret(secret)).executeTakeFirstOrThrow();
  }

  const codeOf = (reply: LightMyRequestResponse) => {
    assert.equal(reply.statusCode, 303, reply.body);
    return new URL(String(reply.headers.location)).searchParams.get('code');
  };

  it('carries the request options of POST /api/auth/passkey/options, the webauthn autofill token and the script from this origin', async () => {
    const browser = new PageBrowser(testApp.app);
    const page = await browser.get(authorizeUrl);
    assert.equal(page.statusCode, 200, page.body);
    const options = webauthnOptionsOf(page.body);
    assert.equal(options.rpId, RP_ID);
    assert.equal(options.allowCredentials, undefined, 'discoverable passkeys');
    const stored = await testApp.db.selectFrom('webauthn_challenges').selectAll().where('challenge', '=', options.challenge).executeTakeFirstOrThrow();
    assert.equal(stored.purpose, 'sign_in');
    assert.equal(stored.user_id, null);
    assert.match(page.body, /<input id="email" name="email" type="email" autocomplete="username webauthn"/);
    assert.match(page.body, /<input type="hidden" name="webauthn" value\/>/);
    assert.match(page.body, /<button type="submit" name="action" value="passkey" formnovalidate hidden>Sign in with a passkey<\/button>/i);
    assert.match(page.body, /<script src="\/oauth\/assets\/passkey.js" defer><\/script>/);
    assert.doesNotMatch(page.body, /<script>/, 'no inline script');
    assert.notEqual(webauthnOptionsOf((await browser.get(authorizeUrl)).body).challenge, options.challenge, 'a new challenge each time');

    const script = await testApp.app.inject({ method: 'GET', url: '/oauth/assets/passkey.js' });
    assert.equal(script.statusCode, 200);
    assert.match(String(script.headers['content-type']), /^text\/javascript/);
    assert.match(script.body, /SimpleWebAuthnBrowser/);
    assert.match(script.body, /data-webauthn-options/);
  });

  it('signs in with a user-verified passkey: two factors, the sign-in session, then the code', async () => {
    const { user, authenticator } = await userWithPasskey();
    const browser = new PageBrowser(testApp.app);
    const page = await browser.get(authorizeUrl);
    const assertion = authenticator.assert(webauthnOptionsOf(page.body));
    const reply = await browser.submit(page, 'passkey', { webauthn: JSON.stringify(assertion) });
    assert.match(codeOf(reply) ?? '', /^[A-Za-z0-9_-]{43}$/);
    const session = await signinSessionOf(browser);
    assert.equal(session.user_id, user.id);
    assert.deepEqual(session.amr, ['hwk', 'mfa']);
    assert.ok(session.mfa_verified_at);

    // The challenge was spent: the same assertion again is refused, on the page.
    const again = await browser.submit(page, 'passkey', { webauthn: JSON.stringify(assertion) });
    assert.equal(again.statusCode, 400, again.body);
    assert.match(again.body, /role="alert">The passkey could not sign you in\./);
  });

  it('asks a user with an authenticator app for its code after a passkey without user verification', async () => {
    const { user, authenticator } = await userWithPasskey();
    const { device } = await enrolTotp(testApp.app, user);
    const browser = new PageBrowser(testApp.app);
    const page = await browser.get(authorizeUrl);
    const assertion = authenticator.assert(webauthnOptionsOf(page.body), { userVerified: false });
    const second = await browser.submit(page, 'passkey', { webauthn: JSON.stringify(assertion) });
    assert.equal(second.statusCode, 200, second.body);
    assert.match(second.body, /<h1>Confirm it is you<\/h1>/);
    assert.match(second.body, /name="action" value="totp"/);
    const reply = await browser.submit(second, 'totp', { code: device.next() });
    assert.ok(codeOf(reply));
    assert.deepEqual((await signinSessionOf(browser)).amr, ['hwk', 'otp', 'mfa']);
  });

  it('signs in a user without a second factor by a passkey without user verification, as one factor', async () => {
    const { authenticator } = await userWithPasskey();
    const browser = new PageBrowser(testApp.app);
    const page = await browser.get(authorizeUrl);
    const reply = await browser.submit(page, 'passkey', { webauthn: JSON.stringify(authenticator.assert(webauthnOptionsOf(page.body), { userVerified: false })) });
    assert.ok(codeOf(reply));
    assert.deepEqual((await signinSessionOf(browser)).amr, ['hwk']);
  });

  it('refuses a bad signature, an unknown passkey and a field that is no assertion with one message, and starts nothing', async () => {
    const { authenticator } = await userWithPasskey();
    const stranger = new SoftwareAuthenticator(ISSUER, RP_ID);
    stranger.register({ challenge: 'x', rp: { name: 'Shop', id: RP_ID }, user: { id: Buffer.from('nobody').toString('base64url') } });
    const browser = new PageBrowser(testApp.app);
    for (const webauthn of [
      (options: RequestOptions) => JSON.stringify(authenticator.assert(options, { tamper: true })),
      (options: RequestOptions) => JSON.stringify(stranger.assert(options)),
      () => '{"id":"nope"}',
      () => 'not json',
      () => '',
    ]) {
      const page = await browser.get(authorizeUrl);
      const reply = await browser.submit(page, 'passkey', { webauthn: webauthn(webauthnOptionsOf(page.body)) });
      assert.equal(reply.statusCode, 400, reply.body);
      assert.match(reply.body, /role="alert">The passkey could not sign you in\. Try again, or sign in another way\.<\/p>/);
      assert.ok(webauthnOptionsOf(reply.body).challenge, 'the page again, with a new challenge');
    }
    assert.equal(browser.cookies.get('__Host-shop_sid'), undefined, 'no sign-in session');
  });

  it('refuses a post without its CSRF token (403) and spends no challenge', async () => {
    const { authenticator } = await userWithPasskey();
    const browser = new PageBrowser(testApp.app);
    const page = await browser.get(authorizeUrl);
    const options = webauthnOptionsOf(page.body);
    const url = authorizeUrl;
    const refused = await browser.post(url, { action: 'passkey', webauthn: JSON.stringify(authenticator.assert(options)) });
    assert.equal(refused.statusCode, 403, refused.body);
    const stored = await testApp.db.selectFrom('webauthn_challenges').select('challenge').where('challenge', '=', options.challenge).executeTakeFirst();
    assert.ok(stored, 'the challenge is still there');
    assert.equal(browser.cookies.get('__Host-shop_sid'), undefined);
  });
});
