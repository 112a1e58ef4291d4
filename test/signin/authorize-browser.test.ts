import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import { accessibilityViolationsOf, launchChromium, noChromium, pageReportingPolicy, screenshotPath, startLandingApp } from '../helpers/console-browser.js';
import { pkcePair } from '../helpers/page-browser.js';
import { freePort } from '../helpers/service-process.js';
import { buildTestApp, createUser, loginAdmin, type Session, type TestApp } from '../helpers/test-app.js';
import { enrolTotp } from '../mfa/mfa-helpers.js';

/**
 * The hosted pages in Debian's Chromium (API.md section 18): signed in through the page by
 * keyboard-reachable fields, redirected to an app on another origin (which the policy's
 * form-action must allow, as Chromium applies it to a post's redirect), and no axe violation
 * at 390 px and 1280 px, nor a CSP report.
 */
describe('the hosted sign-in pages in a browser', { skip: noChromium }, () => {
  let testApp: TestApp;
  let browser: Browser;
  let page: Page;
  let landing: Awaited<ReturnType<typeof startLandingApp>>;
  let baseUrl: string;
  let callback: string;
  let user: Session;
  let admin: Session;
  const apps = {} as Record<'firstParty' | 'thirdParty', string>;
  const policyReports: string[] = [];

  before(async () => {
    // The app the browser is sent back to: another origin, answering any path.
    landing = await startLandingApp();
    callback = landing.callback;
    const port = Number(await freePort());
    baseUrl = `http://127.0.0.1:${port}`;
    testApp = await buildTestApp({ environment: { PUBLIC_URL: baseUrl } });
    await testApp.app.listen({ port, host: '127.0.0.1' });
    admin = await loginAdmin(testApp.app);
    const create = async (payload: Record<string, unknown>) => {
      const reply = await testApp.app.inject({ method: 'POST', url: '/api/clients', headers: admin.auth, payload: { type: 'public', redirect_uris: [callback], scopes: ['openid', 'email', 'profile'], ...payload } });
      assert.equal(reply.statusCode, 201, reply.body);
      return reply.json().id as string;
    };
    apps.firstParty = await create({ name: 'Storefront', first_party: true });
    apps.thirdParty = await create({ name: 'Partner Rewards' });
    user = await createUser(testApp.app, { admin });
    browser = await launchChromium();
    page = await pageReportingPolicy(browser, policyReports);
  });
  after(async () => {
    await browser?.close();
    await testApp?.close();
    await landing?.close();
  });

  const authorizeUrl = (clientId: string, extra: Record<string, string> = {}) =>
    `${baseUrl}/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: callback, scope: 'openid email', state: 'browser-state', code_challenge: pkcePair().challenge, code_challenge_method: 'S256', ...extra })}`;

  /** axe's WCAG A and AA violations at both widths the pages are made for; `picture` names the screenshots taken at each. */
  async function violationsAtBothWidths(picture?: string): Promise<string[]> {
    const found: string[] = [];
    for (const width of [390, 1280]) {
      await page.setViewportSize({ width, height: width > 500 ? 900 : 844 });
      if (picture) await page.screenshot({ path: await screenshotPath(`${picture}-${width}`), fullPage: true });
      found.push(...(await accessibilityViolationsOf(page)).map((violation) => `${width}px ${violation}`));
      const sideways = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.equal(sideways, 0, `nothing hidden sideways at ${width} px`);
    }
    return found;
  }

  it('signs in through the page (a wrong password first) and lands at the app with a code, with no axe violation', async () => {
    await page.goto(authorizeUrl(apps.firstParty));
    assert.equal(await page.locator('h1').count(), 1);
    assert.deepEqual(await violationsAtBothWidths('signin'), []);

    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('alert').waitFor();
    assert.equal(await page.getByRole('alert').textContent(), 'The email, password or code is not right.');
    assert.deepEqual(await violationsAtBothWidths(), [], 'the page with its error');

    await page.getByLabel('Password').fill(user.password);
    await page.getByLabel('Password').press('Enter');
    await page.waitForURL((url) => url.href.startsWith(callback));
    const landed = new URL(page.url());
    assert.match(landed.searchParams.get('code') ?? '', /^[A-Za-z0-9_-]{43}$/);
    assert.equal(landed.searchParams.get('state'), 'browser-state');
    assert.equal(landed.searchParams.get('iss'), baseUrl);
    const cookies = await page.context().cookies(baseUrl);
    const session = cookies.find((cookie) => cookie.name === 'shop_sid');
    assert.ok(session, 'the sign-in session cookie');
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, 'Lax');
  });

  it('signs in and allows a third-party app by keyboard alone, in a focus order that follows the page', async () => {
    await page.context().clearCookies();
    await page.goto(authorizeUrl(apps.thirdParty));
    /** What Tab reaches next: the focused element's role-ish tag and its name. */
    const tab = async () => {
      await page.keyboard.press('Tab');
      return page.evaluate(() => {
        const element = document.activeElement as HTMLElement | null;
        const label = element?.id ? document.querySelector(`label[for="${element.id}"]`)?.textContent : undefined;
        return `${element?.tagName.toLowerCase()}:${(label ?? element?.textContent ?? '').trim()}`;
      });
    };
    const order: string[] = [];
    for (let step = 0; step < 7; step++) order.push(await tab());
    // The skip link first, then the form top to bottom (the passkey button is hidden until its script shows it).
    assert.deepEqual(order.slice(0, 4), ['a:Skip to the form', 'input:Email', 'input:Password', 'button:Sign in']);
    assert.ok(order.includes('a:Forgotten your password?'), order.join(', '));
    const focusVisible = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle !== 'none');
    assert.ok(focusVisible, 'the focused element shows its focus');

    await page.goto(authorizeUrl(apps.thirdParty));
    await tab();
    await tab();
    await page.keyboard.type(user.email);
    await tab();
    await page.keyboard.type(user.password);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Partner Rewards wants to use your Shop account' }).waitFor();
    assert.equal(await tab(), 'a:Skip to the form');
    assert.equal(await tab(), 'a:Use another account');
    assert.equal(await tab(), 'button:Allow');
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.href.startsWith(callback));
    assert.ok(new URL(page.url()).searchParams.get('code'));
  });

  it('asks for the emailed code, and for a second factor, on pages without an axe violation', async () => {
    await page.context().clearCookies();
    await page.goto(authorizeUrl(apps.firstParty));
    await page.getByLabel('Email').fill(user.email);
    await page.getByRole('button', { name: 'Email me a code' }).click();
    await page.getByRole('status').waitFor();
    assert.equal(await page.getByLabel('Code').getAttribute('autocomplete'), 'one-time-code');
    assert.deepEqual(await violationsAtBothWidths(), [], 'the code page');

    const guarded = await createUser(testApp.app, { admin });
    const { device } = await enrolTotp(testApp.app, guarded);
    await page.goto(authorizeUrl(apps.firstParty));
    await page.getByLabel('Email').fill(guarded.email);
    await page.getByLabel('Password').fill(guarded.password);
    await page.getByLabel('Password').press('Enter');
    await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    assert.deepEqual(await violationsAtBothWidths('signin-second-factor'), [], 'the second-factor page');
    await page.getByLabel('Code', { exact: true }).fill(device.next());
    await page.getByRole('button', { name: 'Confirm', exact: true }).click();
    await page.waitForURL((url) => url.href.startsWith(callback));
    assert.ok(new URL(page.url()).searchParams.get('code'));
  });

  it("shows a third-party app's consent page in German without an axe violation, and Allow lands at the app", async () => {
    await page.goto(authorizeUrl(apps.thirdParty, { ui_locales: 'de' }));
    assert.equal(await page.locator('html').getAttribute('lang'), 'de');
    assert.equal(await page.locator('h1').textContent(), 'Partner Rewards möchte Ihr Shop-Konto verwenden');
    assert.deepEqual(await violationsAtBothWidths('signin-consent-de'), []);
    await page.getByRole('button', { name: 'Zulassen' }).click();
    await page.waitForURL((url) => url.href.startsWith(callback));
    assert.ok(new URL(page.url()).searchParams.get('code'));
    assert.deepEqual(policyReports, [], 'the policy refused nothing the pages use');
  });

  it('shows the create-account page of prompt=create, then its code page, without an axe violation', async () => {
    // A live sign-in session answers at once; prompt=create opens the page for a browser that needs to sign in.
    await page.context().clearCookies();
    await page.goto(authorizeUrl(apps.firstParty, { prompt: 'create' }));
    assert.equal(await page.getByLabel('New password').getAttribute('autocomplete'), 'new-password');
    assert.deepEqual(await violationsAtBothWidths('signin-create-account'), []);
    await page.getByLabel('Name').fill('Grace Hopper');
    await page.getByLabel('Email').fill(`grace-${Date.now()}@example.com`);
    await page.getByLabel('New password').fill('correct-horse-battery');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('status').waitFor();
    assert.match((await page.getByRole('status').textContent()) ?? '', /Enter it to finish/);
    assert.deepEqual(await violationsAtBothWidths(), [], 'the code page after create');
  });

  it('opens the forgotten-password page from the sign-in page, posts it, and leads back, without an axe violation', async () => {
    await page.context().clearCookies();
    await page.goto(authorizeUrl(apps.firstParty, { ui_locales: 'de' }));
    const signInUrl = page.url();
    assert.deepEqual(await violationsAtBothWidths('signin-de'), [], 'the German sign-in page');
    await page.getByRole('link', { name: 'Passwort vergessen?' }).click();
    await page.getByRole('heading', { name: 'Passwort zurücksetzen' }).waitFor();
    assert.equal(await page.getByLabel('E-Mail').getAttribute('autocomplete'), 'email');
    assert.deepEqual(await violationsAtBothWidths('signin-forgot-password-de'), [], 'the forgotten-password page');
    await page.getByLabel('E-Mail').fill(user.email);
    await page.getByRole('button', { name: 'Link per E-Mail senden' }).click();
    await page.getByRole('status').waitFor();
    assert.match((await page.getByRole('status').textContent()) ?? '', /ist ein Link zum Zurücksetzen des Passworts unterwegs/);
    assert.deepEqual(await violationsAtBothWidths(), [], 'the page after the post');
    await page.getByRole('link', { name: 'Zurück zur Anmeldung' }).click();
    await page.getByRole('heading', { name: 'Bei Shop anmelden' }).waitFor();
    assert.equal(page.url(), signInUrl, 'back at the same authorization request');
    assert.deepEqual(policyReports, []);
  });
});
