import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import { accessibilityViolationsOf, launchChromium, noChromium, pageReportingPolicy, startLandingApp } from '../helpers/console-browser.js';
import { pkcePair } from '../helpers/page-browser.js';
import { freePort } from '../helpers/service-process.js';
import { buildTestApp, loginAdmin, type TestApp } from '../helpers/test-app.js';
import { signInAtUpstreamPage } from '../helpers/upstream-browser.js';
import { startUpstreamProvider, type UpstreamProvider } from '../helpers/upstream-provider.js';

const SECRET = 'upstream-client-secret-of-the-shop';

/**
 * API.md section 20 end to end in Debian's Chromium: the provider's button on the hosted sign-in
 * page, oidc-provider's own login and consent pages (its development interactions), the
 * callback, and the app's redirect URI with a code; the page's policy lets the button's post be
 * redirected to the provider (Chromium applies form-action to it), and no CSP report is made.
 */
describe('sign in with another provider, in a browser', { skip: noChromium }, () => {
  let testApp: TestApp;
  let upstream: UpstreamProvider;
  let browser: Browser;
  let page: Page;
  let landing: Awaited<ReturnType<typeof startLandingApp>>;
  let baseUrl: string;
  let callback: string;
  let appId: string;
  let providerId: string;
  const policyReports: string[] = [];

  before(async () => {
    landing = await startLandingApp();
    callback = landing.callback;
    const port = Number(await freePort());
    baseUrl = `http://127.0.0.1:${port}`;
    upstream = await startUpstreamProvider({
      client: { client_id: 'shop', client_secret: SECRET, redirect_uris: [`${baseUrl}/oauth/callback/any`] },
      redirectUriPrefix: `${baseUrl}/oauth/callback/`,
    });
    testApp = await buildTestApp({ environment: { PUBLIC_URL: baseUrl } });
    await testApp.app.listen({ port, host: '127.0.0.1' });
    const admin = await loginAdmin(testApp.app);
    const app = await testApp.app.inject({ method: 'POST', url: '/api/clients', headers: admin.auth, payload: { name: 'Storefront', type: 'public', first_party: true, redirect_uris: [callback], scopes: ['openid', 'email'] } });
    appId = app.json().id;
    const provider = await testApp.app.inject({ method: 'POST', url: '/api/identity-providers', headers: admin.auth, payload: { name: 'Upstream', issuer: upstream.issuer, client_id: 'shop', client_secret: SECRET, button_label: 'Continue with Upstream' } });
    assert.equal(provider.statusCode, 201, provider.body);
    providerId = provider.json().id;
    browser = await launchChromium();
    page = await pageReportingPolicy(browser, policyReports);
  });
  after(async () => {
    await browser?.close();
    await testApp?.close();
    await upstream?.stop();
    await landing?.close();
  });

  it("signs a new customer in through the provider's button and pages, and lands at the app with a code", async () => {
    const account = { sub: `sub-${randomUUID()}`, email: `browser-${randomUUID().slice(0, 8)}@example.com`, email_verified: true };
    upstream.accounts.set(account.sub, account);
    const query = new URLSearchParams({ response_type: 'code', client_id: appId, redirect_uri: callback, scope: 'openid email', state: 'browser-state', code_challenge: pkcePair().challenge, code_challenge_method: 'S256' });
    await page.goto(`${baseUrl}/oauth/authorize?${query}`);
    assert.deepEqual(await accessibilityViolationsOf(page), [], 'the sign-in page with its provider button');
    await page.getByRole('button', { name: 'Continue with Upstream' }).click();

    // oidc-provider's own login and consent pages: the person signs in there.
    await signInAtUpstreamPage(page, upstream.issuer, account.sub);

    await page.waitForURL((url) => url.href.startsWith(callback));
    const landed = new URL(page.url());
    assert.match(landed.searchParams.get('code') ?? '', /^[A-Za-z0-9_-]{43}$/);
    assert.equal(landed.searchParams.get('state'), 'browser-state');
    const user = await testApp.db.selectFrom('users').select(['id', 'email_verified', 'password_hash']).where('email', '=', account.email).executeTakeFirstOrThrow();
    assert.deepEqual([user.email_verified, user.password_hash], [true, null]);
    const identity = await testApp.db.selectFrom('user_identities').select(['provider_id', 'subject']).where('user_id', '=', user.id).executeTakeFirstOrThrow();
    assert.deepEqual(identity, { provider_id: providerId, subject: account.sub });
    assert.deepEqual(policyReports, [], 'no CSP report on the way');
  });
});
