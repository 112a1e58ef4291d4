import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { hashAuthorizationCode } from '../../src/oauth/authorization-codes.js';
import { hashBrowserSecret } from '../../src/signin/signin-service.js';
import { csrfTokenOf, PageBrowser, pkcePair } from '../helpers/page-browser.js';
import { SmtpCatcher } from '../helpers/smtp-catcher.js';
import { buildTestApp, createUser, loginAdmin, uniqueEmail, type Session, type TestApp } from '../helpers/test-app.js';
import { enrolTotp } from '../mfa/mfa-helpers.js';

const ISSUER = 'https://accounts.example.test';
const CALLBACK = 'https://shop.example.com/callback';
const LOGO = 'https://cdn.example.net/partner.png';
const CODE_IN_MAIL = /Your code to sign in is (\d{6})\./;

describe('GET /oauth/authorize and the hosted sign-in pages (API.md section 18)', () => {
  let testApp: TestApp;
  let catcher: SmtpCatcher;
  let admin: Session;
  const apps = {} as Record<'firstParty' | 'thirdParty' | 'native' | 'service' | 'disabled', string>;

  before(async () => {
    catcher = new SmtpCatcher();
    testApp = await buildTestApp({ environment: { PUBLIC_URL: ISSUER, SMTP_URL: await catcher.start(), SIGNIN_BRAND_NAME: 'Acme Shop', SIGNIN_LOGO_URL: 'https://static.example.org/acme.svg' } });
    admin = await loginAdmin(testApp.app);
    const create = async (payload: Record<string, unknown>) => {
      const reply = await testApp.app.inject({ method: 'POST', url: '/api/clients', headers: admin.auth, payload: { name: 'Shop app', ...payload } });
      assert.equal(reply.statusCode, 201, reply.body);
      return reply.json().id as string;
    };
    apps.firstParty = await create({ name: 'Acme storefront', type: 'public', first_party: true, redirect_uris: [CALLBACK], scopes: ['openid', 'email', 'profile', 'offline_access'] });
    apps.thirdParty = await create({ name: 'Partner Rewards', type: 'confidential', logo_uri: LOGO, redirect_uris: ['https://partner.example.org/cb?tenant=7'], scopes: ['openid', 'email', 'profile'] });
    apps.native = await create({ name: 'Acme desktop', type: 'public', first_party: true, redirect_uris: ['http://127.0.0.1:8400/callback'], scopes: ['openid'] });
    apps.service = await create({ name: 'Warehouse', scopes: ['variants:read'] });
    apps.disabled = await create({ name: 'Old app', type: 'public', first_party: true, redirect_uris: [CALLBACK], scopes: ['openid'] });
    const disabled = await testApp.app.inject({
      method: 'PATCH',
      url: `/api/clients/${apps.disabled}`,
      headers: { ...admin.auth, 'content-type': 'application/merge-patch+json' },
      payload: JSON.stringify({ status: 'disabled' }),
    });
    assert.equal(disabled.statusCode, 200, disabled.body);
  });
  after(async () => {
    await testApp.close();
    await catcher.stop();
  });

  const { challenge } = pkcePair();
  /** An authorization request's URL: a first-party app's, with `overrides` (undefined leaves a parameter out). */
  const authorizeUrl = (overrides: Record<string, string | undefined> = {}) => {
    const parameters: Record<string, string | undefined> = {
      response_type: 'code',
      client_id: apps.firstParty,
      redirect_uri: CALLBACK,
      scope: 'openid email',
      state: 'state-123',
      nonce: 'nonce-456',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      ...overrides,
    };
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(parameters)) if (value !== undefined) query.append(name, value);
    return `/oauth/authorize?${query}`;
  };
  const thirdParty = (overrides: Record<string, string | undefined> = {}) =>
    authorizeUrl({ client_id: apps.thirdParty, redirect_uri: 'https://partner.example.org/cb?tenant=7', ...overrides });

  /** The redirect's query, after checking it goes to `target`. */
  const redirectOf = (reply: LightMyRequestResponse, target = CALLBACK) => {
    assert.equal(reply.statusCode, 303, reply.body);
    assert.equal(reply.headers['cache-control'], 'no-store');
    const location = new URL(String(reply.headers.location));
    assert.equal(`${location.origin}${location.pathname}`, new URL(target).origin + new URL(target).pathname);
    return location.searchParams;
  };

  const assertPageHeaders = (reply: LightMyRequestResponse) => {
    assert.match(String(reply.headers['content-type']), /^text\/html; charset=utf-8/);
    assert.equal(reply.headers['cache-control'], 'no-store');
    const policy = String(reply.headers['content-security-policy']);
    assert.match(policy, /frame-ancestors 'none'/);
    assert.match(policy, /script-src 'self'/);
    assert.doesNotMatch(policy, /unsafe-inline/);
    assert.equal(reply.headers['x-frame-options'], 'DENY');
    assert.equal((reply.body.match(/<h1>/g) ?? []).length, 1, 'one heading');
  };

  /** The code of the first mail to `email` after the first `skip` whose text `pattern` finds it in (the mail goes after the page's reply). */
  async function mailedCode(email: string, skip: number, pattern: RegExp): Promise<string> {
    for (let waited = 0; waited < 15_000; waited += 50) {
      await testApp.jobs.runNow('send-mail');
      const code = catcher.mails.slice(skip).filter((mail) => mail.to.includes(email.toLowerCase())).map((mail) => pattern.exec(mail.text)?.[1]).find(Boolean);
      if (code) return code;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`no code mailed to ${email}`);
  }

  /** The `count`th code mailed to `email` (codes are sent after the page's reply, so it waits for them). */
  async function nthMailedCode(email: string, count: number): Promise<string> {
    for (let waited = 0; waited < 15_000; waited += 50) {
      await testApp.jobs.runNow('send-mail');
      const codes = catcher.mails.filter((mail) => mail.to.includes(email.toLowerCase())).map((mail) => CODE_IN_MAIL.exec(mail.text)?.[1]).filter(Boolean);
      if (codes.length >= count) return codes[count - 1]!;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`no code number ${count} mailed to ${email}`);
  }

  /** A user signed in through the page by password; answers the browser and the reply to the sign-in. */
  async function signInByPassword(url: string, user: Session, browser = new PageBrowser(testApp.app)) {
    const page = await browser.get(url);
    assert.equal(page.statusCode, 200, page.body);
    const reply = await browser.submit(page, 'password', { email: user.email, password: user.password });
    return { browser, reply };
  }

  it('shows a 400 error page, never a redirect, for an unknown, disabled or service app and for a redirect URI not registered character for character', async () => {
    const browser = new PageBrowser(testApp.app);
    const cases: [string, Record<string, string | undefined>][] = [
      ['unknown app', { client_id: '6f1c1c5e-0000-4000-8000-000000000000' }],
      ['client_id that is no id', { client_id: 'nope' }],
      ['no client_id', { client_id: undefined }],
      ['disabled app', { client_id: apps.disabled }],
      ['service client', { client_id: apps.service }],
      ['other path', { redirect_uri: 'https://shop.example.com/callback2' }],
      ['added query', { redirect_uri: `${CALLBACK}?x=1` }],
      ['userinfo', { redirect_uri: 'https://evil@shop.example.com/callback' }],
      ['other host', { redirect_uri: 'https://shop.example.com.evil.test/callback' }],
      ['trailing slash', { redirect_uri: `${CALLBACK}/` }],
      ['no redirect_uri', { redirect_uri: undefined }],
      ['http for an https URI', { redirect_uri: 'http://shop.example.com/callback' }],
      ['another port of a URI that is not loopback', { redirect_uri: 'https://shop.example.com:8443/callback' }],
    ];
    for (const [what, overrides] of cases) {
      const reply = await browser.get(authorizeUrl(overrides));
      assert.equal(reply.statusCode, 400, `${what}: ${reply.statusCode}`);
      assert.equal(reply.headers.location, undefined, what);
      assertPageHeaders(reply);
      assert.match(reply.body, /<html lang="en">/);
    }
    const twice = await browser.get(`${authorizeUrl()}&redirect_uri=${encodeURIComponent(CALLBACK)}`);
    assert.equal(twice.statusCode, 400, 'a repeated redirect_uri is not trusted either');
    assert.equal(twice.headers.location, undefined);
  });

  it("accepts a loopback redirect URI in another port (RFC 8252), and nothing else of it changed", async () => {
    const browser = new PageBrowser(testApp.app);
    const native = (uri: string) => authorizeUrl({ client_id: apps.native, redirect_uri: uri, scope: 'openid' });
    assert.equal((await browser.get(native('http://127.0.0.1:51234/callback'))).statusCode, 200);
    assert.equal((await browser.get(native('http://127.0.0.1/callback'))).statusCode, 200);
    assert.equal((await browser.get(native('http://localhost:51234/callback'))).statusCode, 400, 'another host');
    assert.equal((await browser.get(native('http://127.0.0.1:51234/callback/other'))).statusCode, 400, 'another path');
  });

  it('redirects every other fault to the app with error, error_description, state and iss', async () => {
    const browser = new PageBrowser(testApp.app);
    const cases: [string, string, string][] = [
      ['response_type token', authorizeUrl({ response_type: 'token' }), 'unsupported_response_type'],
      ['no response_type', authorizeUrl({ response_type: undefined }), 'invalid_request'],
      ['a scope the app may not ask for', authorizeUrl({ scope: 'openid phone' }), 'invalid_scope'],
      ['a scope of section 11', authorizeUrl({ scope: 'openid users:read' }), 'invalid_scope'],
      ['no PKCE challenge', authorizeUrl({ code_challenge: undefined, code_challenge_method: undefined }), 'invalid_request'],
      ['plain PKCE', authorizeUrl({ code_challenge_method: 'plain' }), 'invalid_request'],
      ['no PKCE method', authorizeUrl({ code_challenge_method: undefined }), 'invalid_request'],
      ['a repeated scope', `${authorizeUrl()}&scope=openid`, 'invalid_request'],
      ['a repeated state', `${authorizeUrl()}&state=other`, 'invalid_request'],
      ['an unknown prompt', authorizeUrl({ prompt: 'select_account' }), 'invalid_request'],
      ['max_age that is no number', authorizeUrl({ max_age: 'soon' }), 'invalid_request'],
    ];
    for (const [what, url, error] of cases) {
      const query = redirectOf(await browser.get(url));
      assert.equal(query.get('error'), error, what);
      assert.ok(query.get('error_description'), what);
      assert.equal(query.get('state'), 'state-123', what);
      assert.equal(query.get('iss'), ISSUER, what);
      assert.equal(query.get('code'), null, what);
    }
  });

  it('signs in by password: a sign-in session with its cookie, then a 303 with a code bound to the request', async () => {
    const user = await createUser(testApp.app, { admin });
    const browser = new PageBrowser(testApp.app);
    const page = await browser.get(authorizeUrl({ login_hint: user.email }));
    assert.equal(page.statusCode, 200);
    assertPageHeaders(page);
    assert.match(String(page.headers['content-security-policy']), /img-src 'self' https:\/\/static\.example\.org(;|$)/);
    assert.match(String(page.headers['content-security-policy']), /form-action 'self' https:\/\/shop\.example\.com(;|$)/);
    assert.match(page.body, /<img class="brand" src="https:\/\/static\.example\.org\/acme\.svg" alt="Acme Shop"/);
    assert.match(page.body, /<h1>Sign in to Acme Shop<\/h1>/);
    assert.match(page.body, new RegExp(`<input id="email" name="email" type="email" autocomplete="username webauthn" value="${user.email}"`), 'login_hint fills in the email');
    assert.match(page.body, /<label for="password">Password<\/label>/);
    assert.match(page.body, /name="password" type="password" autocomplete="current-password"/);
    assert.match(page.body, /<button type="submit" name="action" value="password"/);
    assert.match(page.body, /<button type="submit" name="action" value="send_code"/);
    assert.match(String(page.headers['set-cookie']), /^__Host-shop_csrf=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax; Secure$/);

    const reply = await browser.submit(page, 'password', { email: user.email, password: user.password });
    const query = redirectOf(reply);
    assert.deepEqual([...query.keys()].sort(), ['code', 'iss', 'state']);
    assert.equal(query.get('state'), 'state-123');
    assert.equal(query.get('iss'), ISSUER);
    assert.match(query.get('code')!, /^[A-Za-z0-9_-]{43}$/);

    const cookie = String(reply.headers['set-cookie']);
    const match = /^__Host-shop_sid=([A-Za-z0-9_-]{43}); Path=\/; Max-Age=2592000; HttpOnly; SameSite=Lax; Secure$/.exec(cookie);
    assert.ok(match, cookie);
    const signin = await testApp.db.selectFrom('sessions').selectAll().where('browser_secret_hash', '=', hashBrowserSecret(match[1]!)).executeTakeFirstOrThrow();
    assert.equal(signin.user_id, user.id);
    assert.deepEqual(signin.amr, ['pwd']);
    assert.equal(signin.client_id, null);
    assert.ok(Math.abs(signin.expires_at.getTime() - signin.created_at.getTime() - 2_592_000_000) < 2000, 'SIGNIN_SESSION_TTL');
    const listed = await testApp.app.inject({ method: 'GET', url: '/api/auth/sessions', headers: user.auth });
    assert.ok(listed.json().items.some((item: { id: string }) => item.id === signin.id), "listed among the user's sessions");

    const code = await testApp.db.selectFrom('authorization_codes').selectAll().where('code_hash', '=', hashAuthorizationCode(query.get('code')!)).executeTakeFirstOrThrow();
    assert.equal(code.client_id, apps.firstParty);
    assert.equal(code.user_id, user.id);
    assert.equal(code.redirect_uri, CALLBACK);
    assert.equal(code.code_challenge, challenge);
    assert.equal(code.nonce, 'nonce-456');
    assert.deepEqual(code.scopes, ['openid', 'email']);
    assert.equal(code.signin_session_id, signin.id);
    assert.deepEqual(code.amr, ['pwd']);
    assert.equal(code.auth_time.getTime(), signin.auth_time.getTime());
    assert.ok(Math.abs(code.expires_at.getTime() - code.created_at.getTime() - 60_000) < 1000);

    // The sign-in session answers the next request at once, without a page.
    const again = redirectOf(await browser.get(authorizeUrl({ state: 'second' })));
    assert.equal(again.get('state'), 'second');
    assert.ok(again.get('code'));
    const sessions = await testApp.db.selectFrom('sessions').select('id').where('user_id', '=', user.id).where('browser_secret_hash', 'is not', null).execute();
    assert.equal(sessions.length, 1, 'no second sign-in session');
  });

  it('shows the page again with one message for a wrong password or an unknown email, counted as the API counts a failed login', async () => {
    const user = await createUser(testApp.app, { admin });
    const browser = new PageBrowser(testApp.app);
    const page = await browser.get(authorizeUrl());
    const wrong = await browser.submit(page, 'password', { email: user.email, password: 'not-the-password' });
    const unknown = await browser.submit(page, 'password', { email: uniqueEmail('nobody'), password: 'not-the-password' });
    for (const reply of [wrong, unknown]) {
      assert.equal(reply.statusCode, 400);
      assertPageHeaders(reply);
      assert.match(reply.body, /<p id="form-error" class="error" role="alert">The email, password or code is not right\.<\/p>/);
      assert.match(reply.body, /name="password" type="password" autocomplete="current-password" aria-invalid="true" aria-describedby="form-error"/);
      assert.doesNotMatch(String(reply.headers['set-cookie'] ?? ''), /shop_sid/, 'no sign-in session');
    }
    // Each showing of the page has its own passkey challenge; the rest is the same.
    const withoutValues = (html: string) => html.replace(/value="[^"]*"/g, '').replace(/data-webauthn-options="[^"]*"/, '');
    assert.equal(withoutValues(wrong.body), withoutValues(unknown.body), 'the same page whether or not the email has an account');
    const failures = await testApp.db.selectFrom('account_attempts').select('id').where('kind', '=', 'login_failure').where('subject', '=', user.email.toLowerCase()).execute();
    assert.equal(failures.length, 1, "the wrong password counts toward the account's failed logins");
  });

  it('refuses a post without the CSRF token, with a wrong one, or marked cross-site: 403, and no session starts', async () => {
    const user = await createUser(testApp.app, { admin });
    const browser = new PageBrowser(testApp.app);
    const page = await browser.get(authorizeUrl());
    const token = csrfTokenOf(page.body);
    const fields = { action: 'password', email: user.email, password: user.password };
    const refusals = [
      await browser.post(authorizeUrl(), fields),
      await browser.post(authorizeUrl(), { ...fields, csrf_token: `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}` }),
      await browser.post(authorizeUrl(), { ...fields, csrf_token: token }, { 'sec-fetch-site': 'cross-site' }),
      await new PageBrowser(testApp.app).post(authorizeUrl(), { ...fields, csrf_token: token }),
    ];
    for (const reply of refusals) {
      assert.equal(reply.statusCode, 403);
      assertPageHeaders(reply);
      assert.equal(reply.headers.location, undefined);
    }
    const sessions = await testApp.db.selectFrom('sessions').select('id').where('user_id', '=', user.id).where('browser_secret_hash', 'is not', null).execute();
    assert.equal(sessions.length, 0);
  });

  it('signs in by an emailed code, which the page asks for after send_code', async () => {
    const user = await createUser(testApp.app, { admin });
    const browser = new PageBrowser(testApp.app);
    const page = await browser.get(authorizeUrl());
    const mailsBefore = catcher.mails.length;
    const asked = await browser.submit(page, 'send_code', { email: user.email });
    assert.equal(asked.statusCode, 200, asked.body);
    assertPageHeaders(asked);
    assert.match(asked.body, /role="status">If .* can sign in here, a code is on its way to it\. It is good for 10 minutes\./);
    assert.match(asked.body, /<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code"/i);
    const code = await mailedCode(user.email, mailsBefore, CODE_IN_MAIL);

    const wrong = await browser.submit(asked, 'email_code', { email: user.email, code: String((Number(code) + 1) % 1_000_000).padStart(6, '0') });
    assert.equal(wrong.statusCode, 400);
    assert.match(wrong.body, /The email, password or code is not right\./);
    const reply = await browser.submit(wrong, 'email_code', { email: user.email, code: code! });
    const query = redirectOf(reply);
    const stored = await testApp.db.selectFrom('authorization_codes').selectAll().where('code_hash', '=', hashAuthorizationCode(query.get('code')!)).executeTakeFirstOrThrow();
    assert.deepEqual(stored.amr, ['email']);
    assert.equal(stored.user_id, user.id);
  });

  it('answers prompt=none without a page: login_required without a sign-in session, consent_required for a third-party app without consent, else a code', async () => {
    const anonymous = redirectOf(await new PageBrowser(testApp.app).get(authorizeUrl({ prompt: 'none' })));
    assert.equal(anonymous.get('error'), 'login_required');
    assert.equal(anonymous.get('state'), 'state-123');
    assert.equal(anonymous.get('iss'), ISSUER);

    const user = await createUser(testApp.app, { admin });
    const { browser } = await signInByPassword(authorizeUrl(), user);
    const silent = redirectOf(await browser.get(authorizeUrl({ prompt: 'none' })));
    assert.ok(silent.get('code'));
    assert.equal(silent.get('error'), null);
    const needsConsent = redirectOf(await browser.get(thirdParty({ prompt: 'none' })), 'https://partner.example.org/cb');
    assert.equal(needsConsent.get('error'), 'consent_required');
    assert.equal(needsConsent.get('state'), 'state-123');
    // max_age of 0: any sign-in is too old.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    assert.equal(redirectOf(await browser.get(authorizeUrl({ prompt: 'none', max_age: '0' }))).get('error'), 'login_required');
  });

  it('asks to sign in again for prompt=login and a max_age older than the sign-in', async () => {
    const user = await createUser(testApp.app, { admin });
    const { browser } = await signInByPassword(authorizeUrl(), user);
    const login = await browser.get(authorizeUrl({ prompt: 'login' }));
    assert.equal(login.statusCode, 200);
    assert.match(login.body, /name="password"/);
    assert.ok(redirectOf(await browser.get(authorizeUrl({ max_age: '3600' }))).get('code'), 'a sign-in within max_age counts');
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const stale = await browser.get(authorizeUrl({ max_age: '0' }));
    assert.equal(stale.statusCode, 200);
    // Signing in on that page answers the request, though prompt=login stays in its URL.
    const reply = await browser.submit(login, 'password', { email: user.email, password: user.password });
    assert.ok(redirectOf(reply).get('code'));
    const signins = await testApp.db.selectFrom('sessions').select(['id', 'ended_at']).where('user_id', '=', user.id).where('browser_secret_hash', 'is not', null).execute();
    assert.equal(signins.length, 2);
    assert.equal(signins.filter((session) => session.ended_at === null).length, 1, "the browser's earlier sign-in session ended with the new one");
  });

  it('asks a third-party app\'s consent: deny redirects with access_denied, allow records it and later requests skip the page, prompt=consent asks again', async () => {
    const user = await createUser(testApp.app, { admin });
    const { browser, reply: consent } = await signInByPassword(thirdParty({ scope: 'openid email' }), user);
    assert.equal(consent.statusCode, 200, consent.body);
    assertPageHeaders(consent);
    assert.match(consent.body, /<h1>Partner Rewards wants to use your Acme Shop account<\/h1>/);
    // An empty alt (written `alt` alone): the app's name is beside it in the heading.
    assert.match(consent.body, new RegExp(`<img class="app-logo" src="${LOGO}" alt(="")? `));
    assert.match(consent.body, /<li>Know who you are<\/li><li>See your email address<\/li>/);
    // Whose account the app gets, and a way to another one: the same request asking for a fresh sign-in.
    assert.ok(consent.body.includes(`You are signed in as ${user.email}.`), 'the consent page names the account');
    const other = /<a href="(\/oauth\/authorize\?[^"]+)">Use another account<\/a>/.exec(consent.body)?.[1]?.replaceAll('&amp;', '&');
    assert.equal(new URL(other!, 'http://pages.test').searchParams.get('prompt'), 'login');
    assert.match((await browser.get(other!)).body, /<h1>Sign in to Acme Shop<\/h1>/);
    assert.match(String(consent.headers['content-security-policy']), /img-src 'self' https:\/\/static\.example\.org https:\/\/cdn\.example\.net;/);
    assert.match(String(consent.headers['content-security-policy']), /form-action 'self' https:\/\/partner\.example\.org/);

    const denied = redirectOf(await browser.submit(consent, 'deny'), 'https://partner.example.org/cb');
    assert.equal(denied.get('error'), 'access_denied');
    assert.equal(denied.get('state'), 'state-123');
    assert.equal(denied.get('iss'), ISSUER);
    assert.equal(denied.get('tenant'), '7', "the redirect URI's own query is kept");
    assert.equal(await testApp.db.selectFrom('app_consents').select('user_id').where('user_id', '=', user.id).executeTakeFirst(), undefined);

    const again = await browser.get(thirdParty({ scope: 'openid email' }));
    assert.equal(again.statusCode, 200, 'still asks');
    const allowed = redirectOf(await browser.submit(again, 'allow'), 'https://partner.example.org/cb');
    assert.ok(allowed.get('code'));
    const consentRow = await testApp.db.selectFrom('app_consents').selectAll().where('user_id', '=', user.id).executeTakeFirstOrThrow();
    assert.equal(consentRow.client_id, apps.thirdParty);
    assert.deepEqual([...consentRow.scopes].sort(), ['email', 'openid']);
    const events = await testApp.db.selectFrom('events').selectAll().where('subject_id', '=', user.id).where('type', '=', 'user.app_authorized').execute();
    assert.equal(events.length, 1);

    assert.ok(redirectOf(await browser.get(thirdParty({ scope: 'openid' })), 'https://partner.example.org/cb').get('code'), 'fewer scopes skip the page');
    assert.equal((await browser.get(thirdParty({ scope: 'openid profile' }))).statusCode, 200, 'a scope not consented to asks again');
    assert.equal((await browser.get(thirdParty({ scope: 'openid', prompt: 'consent' }))).statusCode, 200, 'prompt=consent asks again');
  });

  it('never asks consent of a first-party app, even with prompt=consent', async () => {
    const user = await createUser(testApp.app, { admin });
    const { browser, reply } = await signInByPassword(authorizeUrl({ scope: 'openid profile offline_access', prompt: 'consent' }), user);
    assert.ok(redirectOf(reply).get('code'));
    assert.ok(redirectOf(await browser.get(authorizeUrl({ prompt: 'consent' }))).get('code'));
  });

  it("no longer counts a suspended user's sign-in session on the next request", async () => {
    const user = await createUser(testApp.app, { admin });
    const { browser } = await signInByPassword(authorizeUrl(), user);
    assert.ok(redirectOf(await browser.get(authorizeUrl({ prompt: 'none' }))).get('code'));
    const suspended = await testApp.app.inject({ method: 'PUT', url: `/api/users/${user.id}/status`, headers: admin.auth, payload: { status: 'suspended' } });
    assert.equal(suspended.statusCode, 200, suspended.body);
    assert.equal(redirectOf(await browser.get(authorizeUrl({ prompt: 'none' }))).get('error'), 'login_required');
    const page = await browser.get(authorizeUrl());
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /name="password"/);
    const refused = await browser.submit(page, 'password', { email: user.email, password: user.password });
    assert.equal(refused.statusCode, 403);
    assert.match(refused.body, /This account is suspended/);
  });

  it('asks again after a wrong code with the methods the first step offered: no recovery code field once none is left', async () => {
    const user = await createUser(testApp.app, { admin });
    const { device } = await enrolTotp(testApp.app, user);
    // Every recovery code spent: the API's second step then lists only totp, and so must the page, before and after a wrong code.
    await testApp.db.deleteFrom('mfa_recovery_codes').where('user_id', '=', user.id).execute();
    const { browser, reply: second } = await signInByPassword(authorizeUrl(), user);
    assert.equal(second.statusCode, 200, second.body);
    assert.doesNotMatch(second.body, /name="recovery_code"/);
    const right = device.next();
    const wrong = await browser.submit(second, 'totp', { code: right === '000000' ? '111111' : '000000' });
    assert.equal(wrong.statusCode, 400);
    assert.match(wrong.body, /<button type="submit" name="action" value="totp"/);
    assert.doesNotMatch(wrong.body, /name="recovery_code"/);
  });

  it('asks a user with a second factor for it: a wrong TOTP code shows the page again, the right one signs in with amr pwd otp mfa', async () => {
    const user = await createUser(testApp.app, { admin });
    const { device, factor } = await enrolTotp(testApp.app, user);
    const { browser, reply: second } = await signInByPassword(authorizeUrl(), user);
    assert.equal(second.statusCode, 200, second.body);
    assertPageHeaders(second);
    assert.match(second.body, /<h1>Confirm it is you<\/h1>/);
    assert.match(second.body, /<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code"/i);
    assert.match(second.body, /<button type="submit" name="action" value="totp"/);
    assert.match(second.body, /<input id="recovery_code" name="recovery_code"/);
    assert.match(String(second.headers['set-cookie']), /__Host-shop_mfa=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=300; HttpOnly; SameSite=Lax; Secure/);
    assert.equal((await testApp.db.selectFrom('sessions').select('id').where('user_id', '=', user.id).where('browser_secret_hash', 'is not', null).execute()).length, 0, 'no session before the second step');

    const right = device.next();
    const wrong = await browser.submit(second, 'totp', { code: right === '000000' ? '111111' : '000000' });
    assert.equal(wrong.statusCode, 400);
    assert.match(wrong.body, /role="alert">The code is not right\./);
    assert.match(wrong.body, /aria-invalid="true" aria-describedby="totp-help form-error"/);
    const reply = await browser.submit(wrong, 'totp', { code: right });
    const query = redirectOf(reply);
    const stored = await testApp.db.selectFrom('authorization_codes').selectAll().where('code_hash', '=', hashAuthorizationCode(query.get('code')!)).executeTakeFirstOrThrow();
    assert.deepEqual(stored.amr, ['pwd', 'otp', 'mfa']);
    assert.match(String(reply.headers['set-cookie']), /__Host-shop_mfa=; Path=\/; Max-Age=0/);
    assert.match(String(reply.headers['set-cookie']), /__Host-shop_sid=[A-Za-z0-9_-]{43}/);

    // A recovery code completes a sign-in too; the spent mfa_token does not come back.
    const again = await browser.get(authorizeUrl({ prompt: 'login' }));
    const secondAgain = await browser.submit(again, 'password', { email: user.email, password: user.password });
    const recovered = redirectOf(await browser.submit(secondAgain, 'recovery_code', { recovery_code: factor.recovery_codes![0]! }));
    const byRecovery = await testApp.db.selectFrom('authorization_codes').select('amr').where('code_hash', '=', hashAuthorizationCode(recovered.get('code')!)).executeTakeFirstOrThrow();
    assert.deepEqual(byRecovery.amr, ['pwd', 'mfa']);
    const stale = await browser.post(authorizeUrl(), { csrf_token: csrfTokenOf(secondAgain.body), action: 'totp', code: device.next() });
    assert.equal(stale.statusCode, 400);
    assert.match(stale.body, /The time to confirm it is you ran out\. Sign in again\./);
  });

  it('speaks German when ui_locales asks, else by Accept-Language', async () => {
    const browser = new PageBrowser(testApp.app);
    const german = await browser.get(authorizeUrl({ ui_locales: 'fr de en' }));
    assert.match(german.body, /<html lang="de">/);
    assert.match(german.body, /<h1>Bei Acme Shop anmelden<\/h1>/);
    assert.match(german.body, /<label for="password">Passwort<\/label>/);
    const byHeader = await browser.get(authorizeUrl(), { 'accept-language': 'de-AT,de;q=0.9,en;q=0.5' });
    assert.match(byHeader.body, /<html lang="de">/);
    const uiFirst = await browser.get(authorizeUrl({ ui_locales: 'en' }), { 'accept-language': 'de' });
    assert.match(uiFirst.body, /<html lang="en">/);
    const errorPage = await browser.get(authorizeUrl({ client_id: 'nope', ui_locales: 'de' }));
    assert.match(errorPage.body, /<html lang="de">/);
    assert.match(errorPage.body, /Etwas stimmt nicht/);
  });

  it('keeps a fresh sign-in that prompt=login or max_age asked for from being skipped by posting allow on an old one', async () => {
    const user = await createUser(testApp.app, { admin });
    const { browser, reply } = await signInByPassword(thirdParty(), user);
    assert.equal(reply.statusCode, 200, 'the consent page');
    assert.ok(redirectOf(await browser.submit(reply, 'allow'), 'https://partner.example.org/cb').get('code'));
    // An hour later, someone at the unattended browser: the app asks for a fresh sign-in.
    await testApp.db.updateTable('sessions').set({ auth_time: new Date(Date.now() - 3_600_000) }).where('user_id', '=', user.id).where('browser_secret_hash', 'is not', null).execute();
    for (const overrides of [{ prompt: 'login' }, { max_age: '60' }]) {
      const page = await browser.get(thirdParty(overrides));
      assert.match(page.body, /name="password"/, 'the sign-in page');
      const forged = await browser.submit(page, 'allow');
      assert.equal(forged.statusCode, 200, `${JSON.stringify(overrides)}: no code on the old sign-in`);
      assert.equal(forged.headers.location, undefined);
      assert.match(forged.body, /name="password"/, 'the sign-in page again');
    }
  });

  it('mails the code in the language of the page that asked for it', async () => {
    const user = await createUser(testApp.app, { admin });
    const browser = new PageBrowser(testApp.app);
    const page = await browser.get(authorizeUrl({ ui_locales: 'de' }));
    const mailsBefore = catcher.mails.length;
    const asked = await browser.submit(page, 'send_code', { email: user.email });
    assert.match(asked.body, /ist ein Code dorthin unterwegs\. Er gilt 10 Minuten\./);
    // The catcher undoes quoted-printable byte by byte, so the ü of "für" is left as two characters.
    const code = await mailedCode(user.email, mailsBefore, /Ihr Code f\S+ die Anmeldung lautet (\d{6})\./);
    assert.ok(redirectOf(await browser.submit(asked, 'email_code', { email: user.email, code })).get('code'));
  });

  it('mails the code of an account made on a German page in German, and names every scope in plain words', async () => {
    const browser = new PageBrowser(testApp.app);
    const page = await browser.get(authorizeUrl({ prompt: 'create', ui_locales: 'de' }));
    const email = uniqueEmail('erstellt');
    const mailsBefore = catcher.mails.length;
    const asked = await browser.submit(page, 'create', { name: 'Lise Meitner', email, password: 'correct-horse-battery' });
    assert.match(asked.body, /Wir haben einen Code an erstellt[^ ]* gesendet\./);
    const code = await mailedCode(email, mailsBefore, /Ihr Code f\S+ die Anmeldung lautet (\d{6})\./);
    assert.ok(redirectOf(await browser.submit(asked, 'email_code', { email, code })).get('code'));

    const created = await testApp.app.inject({
      method: 'POST',
      url: '/api/clients',
      headers: admin.auth,
      payload: { name: 'Stock watcher', type: 'public', redirect_uris: [CALLBACK], scopes: ['openid', 'variants:read', 'balance:read'] },
    });
    assert.equal(created.statusCode, 201, created.body);
    const asking = await signInByPassword(authorizeUrl({ client_id: created.json().id, scope: 'openid variants:read balance:read', ui_locales: 'de' }), await createUser(testApp.app, { admin }));
    assert.equal(asking.reply.statusCode, 200, asking.reply.body);
    assert.match(asking.reply.body, /den Katalog sehen: Produkte, Preise und Bestand/);
    assert.match(asking.reply.body, /die Guthabenverläufe der Kunden sehen/);
    assert.doesNotMatch(asking.reply.body, /variants:read/, 'no scope by its technical name');
  });

  it('creates an account on the page prompt=create opens once its mailed code comes back, and answers a taken email exactly alike', async () => {
    const browser = new PageBrowser(testApp.app);
    const page = await browser.get(authorizeUrl({ prompt: 'create' }));
    assert.equal(page.statusCode, 200);
    assertPageHeaders(page);
    assert.match(page.body, /<h1>Create your Acme Shop account<\/h1>/);
    assert.match(page.body, /name="name" type="text" autocomplete="name"/);
    assert.match(page.body, /name="password" type="password" autocomplete="new-password"/);
    // The pages of one request link to each other, keeping the request (and the other prompt values).
    const signInLink = /<a href="(\/oauth\/authorize\?[^"]+)">Already have an account\? Sign in<\/a>/.exec(page.body)?.[1]?.replaceAll('&amp;', '&');
    assert.ok(signInLink, 'the create-account page links to the sign-in page');
    const signInQuery = new URL(signInLink, 'http://pages.test').searchParams;
    assert.equal(signInQuery.get('prompt'), null);
    assert.equal(signInQuery.get('state'), new URL(authorizeUrl(), 'http://pages.test').searchParams.get('state'));
    const signInPage = await browser.get(signInLink);
    assert.equal(signInPage.statusCode, 200);
    assert.match(signInPage.body, /<h1>Sign in to Acme Shop<\/h1>/);
    const createLink = /<a href="(\/oauth\/authorize\?[^"]+)">Create an account<\/a>/.exec(signInPage.body)?.[1]?.replaceAll('&amp;', '&');
    assert.equal(new URL(createLink!, 'http://pages.test').searchParams.get('prompt'), 'create');
    const email = uniqueEmail('created');
    const short = await browser.submit(page, 'create', { name: 'Ada', email, password: 'short' });
    assert.equal(short.statusCode, 400);
    assert.match(short.body, /role="alert">Choose a password of 8 to 128 characters\./);
    const mailsBefore = catcher.mails.length;
    const asked = await browser.submit(short, 'create', { name: 'Ada Lovelace', email, password: 'correct-horse-battery' });
    assert.equal(asked.statusCode, 200);
    assert.match(asked.body, /We sent a code to created[^ ]*\. Enter it to finish/);
    assert.match(asked.body, /autocomplete="one-time-code"/);
    assert.equal(await testApp.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst(), undefined, 'no account before the code comes back');

    const code = await mailedCode(email, mailsBefore, CODE_IN_MAIL);
    const query = redirectOf(await browser.submit(asked, 'email_code', { email, code }));
    const user = await testApp.db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirstOrThrow();
    assert.equal(user.name, 'Ada Lovelace');
    assert.equal(user.role, 'user');
    assert.equal(user.email_verified, true, 'the code proved the email');
    const stored = await testApp.db.selectFrom('authorization_codes').selectAll().where('code_hash', '=', hashAuthorizationCode(query.get('code')!)).executeTakeFirstOrThrow();
    assert.equal(stored.user_id, user.id);
    assert.deepEqual(stored.amr, ['email']);
    const registered = await testApp.db.selectFrom('events').select('data').where('subject_id', '=', user.id).where('type', '=', 'user.registered').execute();
    assert.equal(registered.length, 1);
    assert.equal((registered[0]!.data as { method?: string }).method, undefined, 'registered as POST /api/auth/register registers');
    const login = await testApp.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email, password: 'correct-horse-battery' } });
    assert.equal(login.statusCode, 200, 'the password given on the page is the account’s');

    const again = await new PageBrowser(testApp.app).get(authorizeUrl({ prompt: 'create' }));
    const forged = await new PageBrowser(testApp.app).post(authorizeUrl({ prompt: 'create' }), { csrf_token: csrfTokenOf(again.body), action: 'create', name: 'Other', email, password: 'correct-horse-battery' });
    assert.equal(forged.statusCode, 403, 'a post without the cookie of its token is refused first');

    // The taken email gets the very page a new one gets (but for the address), and its code signs in to the account it has.
    const browser2 = new PageBrowser(testApp.app);
    const page2 = await browser2.get(authorizeUrl({ prompt: 'create' }));
    const mailsBefore2 = catcher.mails.length;
    const duplicate = await browser2.submit(page2, 'create', { name: 'Mallory', email, password: 'another-password-1' });
    const fresh = uniqueEmail('fresh');
    const browser3 = new PageBrowser(testApp.app);
    const unknown = await browser3.submit(await browser3.get(authorizeUrl({ prompt: 'create' })), 'create', { name: 'Mallory', email: fresh, password: 'another-password-1' });
    assert.equal(duplicate.statusCode, unknown.statusCode);
    const comparable = (body: string, address: string) => body.replaceAll(address, 'EMAIL').replace(/name="csrf_token" value="[^"]+"/, '');
    assert.equal(comparable(duplicate.body, email), comparable(unknown.body, fresh));
    const codeOfTaken = await mailedCode(email, mailsBefore2, CODE_IN_MAIL);
    const signedIn = redirectOf(await browser2.submit(duplicate, 'email_code', { email, code: codeOfTaken }));
    const taken = await testApp.db.selectFrom('authorization_codes').select('user_id').where('code_hash', '=', hashAuthorizationCode(signedIn.get('code')!)).executeTakeFirstOrThrow();
    assert.equal(taken.user_id, user.id);
    const kept = await testApp.db.selectFrom('users').select(['name']).where('id', '=', user.id).executeTakeFirstOrThrow();
    assert.equal(kept.name, 'Ada Lovelace', 'the name given on the second page is dropped');
    const otherPassword = await testApp.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email, password: 'another-password-1' } });
    assert.equal(otherPassword.statusCode, 401, 'and so is its password');
  });

  it("applies the create page's name and password only through the browser that gave them: not another person's create, not the API", async () => {
    const passwordOf = async (email: string) => (await testApp.db.selectFrom('users').select(['password_hash', 'name']).where('email', '=', email).executeTakeFirstOrThrow());
    // The owner asks in one browser; someone else asks for the same address in another, whose code replaces the first.
    const email = uniqueEmail('contested');
    const owner = new PageBrowser(testApp.app);
    const ownerPage = await owner.submit(await owner.get(authorizeUrl({ prompt: 'create' })), 'create', { name: 'Owner', email, password: 'owner-password-1' });
    await nthMailedCode(email, 1);
    const intruder = new PageBrowser(testApp.app);
    await intruder.submit(await intruder.get(authorizeUrl({ prompt: 'create' })), 'create', { name: 'Intruder', email, password: 'intruder-password-1' });
    const newest = await nthMailedCode(email, 2);
    assert.ok(redirectOf(await owner.submit(ownerPage, 'email_code', { email, code: newest })).get('code'));
    const made = await passwordOf(email);
    assert.equal(made.password_hash, null, "another browser's password is never set: the code made a password-less account, as an email code does");
    assert.notEqual(made.name, 'Intruder');
    const intruderLogin = await testApp.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email, password: 'intruder-password-1' } });
    assert.equal(intruderLogin.statusCode, 401);

    // A create page's code posted to the API signs in as a plain email code: no password set.
    const viaApi = uniqueEmail('via-api');
    const browser = new PageBrowser(testApp.app);
    const mailsBefore = catcher.mails.length;
    await browser.submit(await browser.get(authorizeUrl({ prompt: 'create' })), 'create', { name: 'Api', email: viaApi, password: 'api-password-12' });
    const code = await mailedCode(viaApi, mailsBefore, CODE_IN_MAIL);
    const login = await testApp.app.inject({ method: 'POST', url: '/api/auth/login/email-code', payload: { email: viaApi, code } });
    assert.equal(login.statusCode, 200, login.body);
    assert.equal((await passwordOf(viaApi)).password_hash, null);
  });

  it('keeps the create page\'s details when the same browser asks for the code again', async () => {
    const email = uniqueEmail('resent');
    const browser = new PageBrowser(testApp.app);
    const asked = await browser.submit(await browser.get(authorizeUrl({ prompt: 'create' })), 'create', { name: 'Resent Person', email, password: 'resent-password-1' });
    await nthMailedCode(email, 1);
    const again = await browser.submit(asked, 'send_code', { email });
    const code = await nthMailedCode(email, 2);
    assert.ok(redirectOf(await browser.submit(again, 'email_code', { email, code })).get('code'));
    const made = await testApp.db.selectFrom('users').select(['name']).where('email', '=', email).executeTakeFirstOrThrow();
    assert.equal(made.name, 'Resent Person');
    const login = await testApp.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email, password: 'resent-password-1' } });
    assert.equal(login.statusCode, 200, login.body);
  });

  it("lets the address's owner take over an account someone registered for it without proving it: their password and sessions end", async () => {
    const email = uniqueEmail('squatted');
    const registered = await testApp.app.inject({ method: 'POST', url: '/api/auth/register', payload: { email, password: 'squatter-password-1', name: 'Squatter' } });
    assert.equal(registered.statusCode, 201, registered.body);
    const squatter = await testApp.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email, password: 'squatter-password-1' } });
    assert.equal(squatter.statusCode, 200);

    const browser = new PageBrowser(testApp.app);
    const before = catcher.mails.length;
    const asked = await browser.submit(await browser.get(authorizeUrl({ prompt: 'create' })), 'create', { name: 'Owner', email, password: 'owner-password-12' });
    const code = await mailedCode(email, before, CODE_IN_MAIL);
    assert.ok(redirectOf(await browser.submit(asked, 'email_code', { email, code })).get('code'));

    const old = await testApp.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email, password: 'squatter-password-1' } });
    assert.equal(old.statusCode, 401, "the squatter's password is gone");
    const ownerLogin = await testApp.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email, password: 'owner-password-12' } });
    assert.equal(ownerLogin.statusCode, 200, ownerLogin.body);
    const squatterSession = await testApp.app.inject({ method: 'GET', url: '/api/users/profile', headers: { authorization: `Bearer ${squatter.json().access_token}` } });
    assert.equal(squatterSession.statusCode, 401, "the squatter's session ended");
    const user = await testApp.db.selectFrom('users').select(['id', 'email_verified']).where('email', '=', email).executeTakeFirstOrThrow();
    assert.equal(user.email_verified, true);
    const events = await testApp.db.selectFrom('events').select('type').where('subject_id', '=', user.id).where('type', 'in', ['user.password_changed', 'user.email_verified']).execute();
    assert.deepEqual(events.map((event) => event.type).sort(), ['user.email_verified', 'user.password_changed']);
  });

  it('answers no HEAD, which would issue a code to a link checker', async () => {
    const head = await testApp.app.inject({ method: 'HEAD', url: authorizeUrl() });
    assert.equal(head.statusCode, 405);
  });

  it('serves the stylesheet the pages load', async () => {
    const css = await testApp.app.inject({ method: 'GET', url: '/oauth/assets/pages.css' });
    assert.equal(css.statusCode, 200);
    assert.match(String(css.headers['content-type']), /^text\/css/);
  });
});

describe('the sign-in page counts toward the login limits as the API does (API.md sections 3 and 10)', () => {
  let testApp: TestApp;
  before(async () => {
    testApp = await buildTestApp({ environment: { PUBLIC_URL: ISSUER, LOGIN_RATE_LIMIT: '3', LOGIN_ACCOUNT_FAILURE_LIMIT: '100' } });
  });
  after(() => testApp.close());

  it("shares LOGIN_RATE_LIMIT with POST /api/auth/login per address and email, and past it shows the page with 429 and Retry-After", async () => {
    const admin = await loginAdmin(testApp.app);
    const created = await testApp.app.inject({ method: 'POST', url: '/api/clients', headers: admin.auth, payload: { name: 'Storefront', type: 'public', first_party: true, redirect_uris: [CALLBACK], scopes: ['openid'] } });
    const url = `/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: created.json().id, redirect_uri: CALLBACK, scope: 'openid', code_challenge: pkcePair().challenge, code_challenge_method: 'S256' })}`;
    const email = uniqueEmail('limited');
    const browser = new PageBrowser(testApp.app);
    const page = await browser.get(url);
    assert.equal((await testApp.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email, password: 'wrong-password-1' } })).statusCode, 401);
    assert.equal((await browser.submit(page, 'password', { email, password: 'wrong-password-1' })).statusCode, 400);
    assert.equal((await browser.submit(page, 'password', { email, password: 'wrong-password-1' })).statusCode, 400);
    const limited = await browser.submit(page, 'password', { email, password: 'wrong-password-1' });
    assert.equal(limited.statusCode, 429);
    assert.match(String(limited.headers['retry-after']), /^\d+$/);
    assert.match(limited.body, /role="alert">Too many tries\. Wait \d+ seconds?, then try again\./);
    assert.equal((await testApp.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email, password: 'wrong-password-1' } })).statusCode, 429, 'the API sees the same budget spent');
  });
});

describe('the hosted pages when the authorization server is off', () => {
  let testApp: TestApp;
  before(async () => {
    testApp = await buildTestApp({ environment: { PUBLIC_URL: 'http://shop.example.com' } });
  });
  after(() => testApp.close());

  it('answers 404 for /oauth/authorize', async () => {
    assert.equal(testApp.config.authorizationServer, false);
    const reply = await testApp.app.inject({ method: 'GET', url: '/oauth/authorize?response_type=code' });
    assert.equal(reply.statusCode, 404);
  });
});
