import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Browser, type CDPSession, type Page } from 'playwright-core';
import { accessibilityViolationsOf, launchChromium, noChromium, pageReportingPolicy, startLandingApp } from '../helpers/console-browser.js';
import { pkcePair } from '../helpers/page-browser.js';
import { freePort } from '../helpers/service-process.js';
import { SoftwareAuthenticator } from '../helpers/software-authenticator.js';
import { buildTestApp, createUser, loginAdmin, type TestApp } from '../helpers/test-app.js';
import { registerPasskey } from '../mfa/mfa-helpers.js';

/**
 * The sign-in page's passkey in Debian's Chromium (API.md sections 18 and 19), with a virtual
 * authenticator holding a passkey registered through the API: the page's script shows the button,
 * gets the assertion (from the email field's autofill, or the button) and posts it, and the
 * browser lands at the app with a code. The service runs on `localhost`, not 127.0.0.1: WebAuthn
 * takes a domain, never an IP address, as relying party.
 */
describe('a passkey on the hosted sign-in page, in a browser', { skip: noChromium }, () => {
  let testApp: TestApp;
  let browser: Browser;
  let page: Page;
  let cdp: CDPSession;
  let landing: Awaited<ReturnType<typeof startLandingApp>>;
  let baseUrl: string;
  let callback: string;
  let clientId: string;
  const policyReports: string[] = [];

  before(async () => {
    landing = await startLandingApp();
    callback = landing.callback;
    const port = Number(await freePort());
    baseUrl = `http://localhost:${port}`;
    testApp = await buildTestApp({ environment: { PUBLIC_URL: baseUrl } });
    await testApp.app.listen({ port, host: '127.0.0.1' });
    const admin = await loginAdmin(testApp.app);
    const created = await testApp.app.inject({
      method: 'POST',
      url: '/api/clients',
      headers: admin.auth,
      payload: { name: 'Storefront', type: 'public', first_party: true, redirect_uris: [callback], scopes: ['openid', 'email'] },
    });
    assert.equal(created.statusCode, 201, created.body);
    clientId = created.json().id;
    browser = await launchChromium();
    page = await pageReportingPolicy(browser, policyReports);
    cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable');
  });
  after(async () => {
    await browser?.close();
    await testApp?.close();
    await landing?.close();
  });

  let authenticatorId: string | undefined;
  /** A user with a passkey registered through the API by a software authenticator, its key put into Chromium's virtual authenticator. */
  async function userWithPasskeyInChromium() {
    const user = await createUser(testApp.app);
    const software = new SoftwareAuthenticator(baseUrl, 'localhost');
    const registered = await registerPasskey(testApp.app, user, software);
    assert.equal(registered.statusCode, 201, registered.body);
    const credential = software.credentials[0]!;
    // Chromium keeps one internal authenticator: a later user's passkey joins the one there.
    authenticatorId ??= (
      await cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
      })
    ).authenticatorId;
    // Only this user's passkey in it, so the browser has one to choose.
    await cdp.send('WebAuthn.clearCredentials', { authenticatorId });
    await cdp.send('WebAuthn.addCredential', {
      authenticatorId,
      credential: {
        credentialId: credential.id.toString('base64'),
        isResidentCredential: true,
        rpId: 'localhost',
        privateKey: (credential.privateKey.export({ format: 'der', type: 'pkcs8' }) as Buffer).toString('base64'),
        userHandle: Buffer.from(credential.userHandle, 'base64url').toString('base64'),
        signCount: credential.counter,
      },
    });
    return { user, authenticatorId };
  }

  const signInUrl = (state: string) =>
    `${baseUrl}/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: callback, scope: 'openid email', state, code_challenge: pkcePair().challenge, code_challenge_method: 'S256' })}`;

  /** The browser landed at the app with a code, and the sign-in session counts the user-verified passkey as two factors. */
  async function landedSignedIn(userId: string, state: string) {
    await page.waitForURL((url) => url.href.startsWith(callback));
    const landed = new URL(page.url());
    assert.match(landed.searchParams.get('code') ?? '', /^[A-Za-z0-9_-]{43}$/);
    assert.equal(landed.searchParams.get('state'), state);
    const signIn = await testApp.db.selectFrom('sessions').select(['amr']).where('user_id', '=', userId).where('browser_secret_hash', 'is not', null).executeTakeFirstOrThrow();
    assert.deepEqual(signIn.amr, ['hwk', 'mfa']);
  }

  it('shows the passkey button with no axe violation, and signs in by the email field\'s passkey autofill', async () => {
    // No authenticator yet: the page waits, its autofill request pending.
    await page.goto(signInUrl('autofill'));
    await page.getByRole('button', { name: 'Sign in with a passkey' }).waitFor({ state: 'visible' });
    assert.equal(await page.getByLabel('Email').getAttribute('autocomplete'), 'username webauthn');
    for (const width of [390, 1280]) {
      await page.setViewportSize({ width, height: width > 500 ? 900 : 844 });
      assert.deepEqual(await accessibilityViolationsOf(page), [], `no axe violation at ${width} px`);
    }
    // Chromium's virtual authenticator answers the conditional (autofill) request at once, as a person picking the passkey would.
    const { user } = await userWithPasskeyInChromium();
    await page.reload();
    await landedSignedIn(user.id, 'autofill');
    assert.deepEqual(policyReports, [], 'the policy refused nothing the page uses');
  });

  it('signs in by the passkey button where the browser has no passkey autofill', async () => {
    await page.context().clearCookies();
    await page.addInitScript(() => {
      PublicKeyCredential.isConditionalMediationAvailable = async () => false;
    });
    const { user } = await userWithPasskeyInChromium();
    await page.goto(signInUrl('button'));
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await landedSignedIn(user.id, 'button');
    assert.deepEqual(policyReports, []);
  });

  it('confirms a password sign-in with the passkey on the second-factor page, as amr pwd hwk mfa', async () => {
    await page.context().clearCookies();
    // The sign-in page's autofill would sign in with the passkey at once, as a first factor: this person types a password.
    await page.addInitScript(() => {
      PublicKeyCredential.isConditionalMediationAvailable = async () => false;
    });
    const { user } = await userWithPasskeyInChromium();
    await page.goto(signInUrl('second-factor'));
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill(user.password);
    await page.getByLabel('Password').press('Enter');
    await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    const button = page.getByRole('button', { name: 'Confirm with a passkey' });
    await button.waitFor({ state: 'visible' });
    for (const width of [390, 1280]) {
      await page.setViewportSize({ width, height: width > 500 ? 900 : 844 });
      assert.deepEqual(await accessibilityViolationsOf(page), [], `no axe violation at ${width} px`);
    }
    await button.click();
    await page.waitForURL((url) => url.href.startsWith(callback));
    assert.equal(new URL(page.url()).searchParams.get('state'), 'second-factor');
    const signIn = await testApp.db.selectFrom('sessions').select(['amr']).where('user_id', '=', user.id).where('browser_secret_hash', 'is not', null).executeTakeFirstOrThrow();
    assert.deepEqual(signIn.amr, ['pwd', 'hwk', 'mfa']);
    assert.deepEqual(policyReports, []);
  });
});
