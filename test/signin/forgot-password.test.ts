import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { csrfTokenOf, PageBrowser, pkcePair } from '../helpers/page-browser.js';
import { SmtpCatcher } from '../helpers/smtp-catcher.js';
import { buildTestApp, createUser, loginAdmin, uniqueEmail, type TestApp } from '../helpers/test-app.js';

const ISSUER = 'https://accounts.example.test';
const CALLBACK = 'https://shop.example.com/callback';
const RESET_LINK = /reset-password\?token=([A-Za-z0-9_-]{43})/;

describe('the forgotten-password page of the hosted pages (API.md sections 3 and 18)', () => {
  let testApp: TestApp;
  let catcher: SmtpCatcher;
  let authorizeUrl: (extra?: Record<string, string>) => string;

  before(async () => {
    catcher = new SmtpCatcher();
    testApp = await buildTestApp({ environment: { PUBLIC_URL: ISSUER, SMTP_URL: await catcher.start(), LOGIN_RATE_LIMIT: '5' } });
    const admin = await loginAdmin(testApp.app);
    const created = await testApp.app.inject({
      method: 'POST',
      url: '/api/clients',
      headers: admin.auth,
      payload: { name: 'Acme storefront', type: 'public', first_party: true, redirect_uris: [CALLBACK], scopes: ['openid', 'email'] },
    });
    assert.equal(created.statusCode, 201, created.body);
    const clientId = created.json().id as string;
    const { challenge } = pkcePair();
    authorizeUrl = (extra = {}) =>
      `/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: CALLBACK, scope: 'openid email', state: 's-1', code_challenge: challenge, code_challenge_method: 'S256', ...extra })}`;
  });
  after(async () => {
    await testApp.close();
    await catcher.stop();
  });

  /** The forgotten-password page, opened by the sign-in page's link, as a browser follows it. */
  async function openFromSignIn(browser: PageBrowser, extra: Record<string, string> = {}) {
    const signIn = await browser.get(authorizeUrl(extra));
    assert.equal(signIn.statusCode, 200, signIn.body);
    const href = /<a href="(\/oauth\/forgot-password[^"]*)"/.exec(signIn.body)?.[1]?.replace(/&amp;/g, '&');
    assert.ok(href, 'the sign-in page links to the forgotten-password page');
    assert.equal(href, authorizeUrl(extra).replace('/oauth/authorize', '/oauth/forgot-password'), 'the link keeps the authorization request');
    return browser.get(href);
  }

  /** The mails to `email` whose text `pattern` finds, once the outbox has sent what it holds. */
  async function mailsTo(email: string, pattern: RegExp, expected: number) {
    let found: { text: string }[] = [];
    for (let waited = 0; waited < 10_000; waited += 50) {
      await testApp.jobs.runNow('send-mail');
      found = catcher.mails.filter((mail) => mail.to.includes(email.toLowerCase()) && pattern.test(mail.text));
      if (found.length >= expected) return found;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return found;
  }

  it('is opened from the sign-in page, posts to its own URL and links back to the sign-in with the same request', async () => {
    const browser = new PageBrowser(testApp.app);
    const page = await openFromSignIn(browser, { login_hint: 'ada@example.com' });
    assert.equal(page.statusCode, 200, page.body);
    assert.equal(page.headers['cache-control'], 'no-store');
    assert.match(String(page.headers['content-security-policy']), /script-src 'self'/);
    assert.match(page.body, /<h1>Reset your password<\/h1>/);
    assert.match(page.body, /<input id="email" name="email" type="email" autocomplete="email" value="ada@example.com" required/);
    assert.match(page.body, /name="action" value="forgot_password"/);
    const action = /<form[^>]* action="([^"]+)"/.exec(page.body)?.[1]?.replace(/&amp;/g, '&');
    assert.equal(action, authorizeUrl({ login_hint: 'ada@example.com' }).replace('/oauth/authorize', '/oauth/forgot-password'));
    const back = /<a href="(\/oauth\/authorize[^"]*)"/.exec(page.body)?.[1]?.replace(/&amp;/g, '&');
    assert.equal(back, authorizeUrl({ login_hint: 'ada@example.com' }));
    assert.equal((await browser.get(back)).statusCode, 200, 'the link back opens the sign-in page again');
  });

  it('mails a reset link in the language of the page, and says the same when no account has the email', async () => {
    const english = await createUser(testApp.app);
    const german = await createUser(testApp.app);
    const nobody = uniqueEmail('nobody');

    const browser = new PageBrowser(testApp.app);
    const page = await openFromSignIn(browser);
    const sent = await browser.submit(page, 'forgot_password', { email: english.email });
    assert.equal(sent.statusCode, 200, sent.body);
    assert.match(sent.body, new RegExp(`<p id="form-notice" class="notice" role="status">If ${english.email} has an account, a link to reset its password is on its way\\.</p>`));
    const unknown = await browser.submit(page, 'forgot_password', { email: nobody });
    assert.equal(unknown.statusCode, 200, unknown.body);
    const withoutEmail = (html: string, email: string) => html.replaceAll(email, 'EMAIL').replace(/value="[^"]*"/g, '');
    assert.equal(withoutEmail(unknown.body, nobody), withoutEmail(sent.body, english.email), 'the same page whether or not the email has an account');

    const germanBrowser = new PageBrowser(testApp.app);
    const germanPage = await openFromSignIn(germanBrowser, { ui_locales: 'de' });
    assert.match(germanPage.body, /<html lang="de">/);
    assert.match(germanPage.body, /<h1>Passwort zurücksetzen<\/h1>/);
    const germanSent = await germanBrowser.submit(germanPage, 'forgot_password', { email: german.email });
    assert.equal(germanSent.statusCode, 200, germanSent.body);
    assert.match(germanSent.body, /ist ein Link zum Zurücksetzen des Passworts unterwegs/);

    const [englishMail] = await mailsTo(english.email, RESET_LINK, 1);
    assert.ok(englishMail, 'the reset mail reached the account');
    assert.match(englishMail.text, /Someone asked to reset the password/);
    const [germanMail] = await mailsTo(german.email, RESET_LINK, 1);
    assert.ok(germanMail, 'the German page sent the reset mail');
    assert.match(germanMail.text, /Jemand hat verlangt, das Passwort/);

    // The link is section 3's: it sets a new password.
    const token = RESET_LINK.exec(englishMail.text)![1]!;
    const confirmed = await testApp.app.inject({ method: 'POST', url: '/api/auth/password-reset/confirm', payload: { token, new_password: 'a-brand-new-password' } });
    assert.equal(confirmed.statusCode, 204, confirmed.body);

    const queued = await testApp.db.selectFrom('email_outbox').select('id').where('to_address', '=', nobody.toLowerCase()).execute();
    assert.equal(queued.length, 0, 'no mail for an email without an account');
  });

  it('refuses a post without its CSRF token (403) and sends nothing', async () => {
    const user = await createUser(testApp.app);
    const browser = new PageBrowser(testApp.app);
    const page = await openFromSignIn(browser);
    const url = /<form[^>]* action="([^"]+)"/.exec(page.body)![1]!.replace(/&amp;/g, '&');
    const missing = await browser.post(url, { action: 'forgot_password', email: user.email });
    assert.equal(missing.statusCode, 403, missing.body);
    const wrong = await browser.post(url, { action: 'forgot_password', email: user.email, csrf_token: 'x'.repeat(43) });
    assert.equal(wrong.statusCode, 403, wrong.body);
    const crossSite = await browser.post(url, { action: 'forgot_password', email: user.email, csrf_token: csrfTokenOf(page.body) }, { 'sec-fetch-site': 'cross-site' });
    assert.equal(crossSite.statusCode, 403, crossSite.body);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const resets = await testApp.db.selectFrom('email_outbox').select('id').where('to_address', '=', user.email.toLowerCase()).where('subject', '=', 'Reset your password').execute();
    assert.equal(resets.length, 0);
  });

  it('shows the page again for an address that is no email, and spends the budget of POST /api/auth/password-reset', async () => {
    const browser = new PageBrowser(testApp.app);
    const page = await openFromSignIn(browser);
    const bad = await browser.submit(page, 'forgot_password', { email: 'not-an-email' });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.body, /role="alert">Enter your email address/);

    // LOGIN_RATE_LIMIT is 5 here: two posts of the page and three requests of the API spend it.
    const email = uniqueEmail('budget');
    for (let round = 0; round < 2; round += 1) {
      assert.equal((await browser.submit(page, 'forgot_password', { email })).statusCode, 200);
      assert.equal((await testApp.app.inject({ method: 'POST', url: '/api/auth/password-reset', payload: { email } })).statusCode, 202);
    }
    assert.equal((await testApp.app.inject({ method: 'POST', url: '/api/auth/password-reset', payload: { email } })).statusCode, 202);
    const last = await browser.submit(page, 'forgot_password', { email });
    assert.equal(last.statusCode, 429, 'the page and the API spend one budget');
    assert.ok(Number(last.headers['retry-after']) > 0);
    assert.match(last.body, /Too many tries\. Wait/);
  });
});
