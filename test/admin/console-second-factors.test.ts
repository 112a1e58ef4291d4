import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { accessibilityViolationsOf, noChromium, useConsole } from '../helpers/console-browser.js';
import { createUser, login } from '../helpers/test-app.js';
import { TotpDevice } from '../helpers/totp-device.js';
import { enrolTotp } from '../mfa/mfa-helpers.js';

/** #33 point 1: second factors in the console, with Chromium's virtual authenticator for passkeys. */
describe('admin console: second factors, in a real browser', { skip: noChromium }, () => {
  const ui = useConsole({ host: 'localhost' });
  const factorsOf = (userId: string) => ui.db().selectFrom('mfa_factors').select(['type', 'name', 'confirmed_at']).where('user_id', '=', userId).execute();

  it('asks for a step-up in a dialog and then makes the change, keeping what was typed; enrols an app and shows recovery codes once', async () => {
    const { page } = ui;
    const admin = await createUser(ui.testApp.app, { role: 'admin', name: 'Ada Admin' });
    const customer = await createUser(ui.testApp.app, { name: 'Cleo Customer' });
    // The browser's session starts before the admin has a factor, so its second factor is not verified.
    await ui.logIn(admin.email, admin.password);
    await page.getByRole('heading', { name: 'Variants' }).waitFor();
    const { device } = await enrolTotp(ui.testApp.app, await login(ui.testApp.app, admin.email, admin.password));

    await page.goto(`${ui.baseUrl}/admin/#/users/${customer.id}`);
    const balance = page.getByRole('form', { name: 'Adjust balance' });
    await balance.getByLabel(/^Amount in/).fill('12.50');
    await balance.getByLabel('Reason').fill('Goodwill for a late parcel');
    await balance.getByRole('button', { name: 'Apply…' }).click();
    await page.getByRole('dialog').getByRole('button', { name: /^Credit/ }).click();
    const stepUp = page.getByRole('dialog', { name: 'Confirm it is you' });
    await stepUp.getByLabel('Code from your authenticator app').fill('000000');
    await stepUp.getByRole('button', { name: 'Verify' }).click();
    await stepUp.getByRole('alert').getByText('The code, recovery code or passkey response does not verify.').waitFor();
    assert.doesNotMatch(await stepUp.getByRole('alert').innerText(), /invalid_mfa_code/, 'no code for developers (#56)');
    assert.deepEqual(await accessibilityViolationsOf(page), [], 'the step-up dialog');
    await stepUp.getByLabel('Code from your authenticator app').fill(device.next());
    await stepUp.getByRole('button', { name: 'Verify' }).click();
    await stepUp.waitFor({ state: 'detached' });
    await page.getByRole('status').getByText(/^Balance changed by/).waitFor();
    const row = await ui.db().selectFrom('users').select('balance').where('id', '=', customer.id).executeTakeFirstOrThrow();
    assert.equal(Number(row.balance), 1250, 'the change was made once, after the step-up, with the amount typed before it');

    await page.goto(`${ui.baseUrl}/admin/#/profile`);
    const factors = page.getByRole('region', { name: 'Second factors' });
    await factors.getByText('A second factor protects your account.').waitFor();
    await factors.getByRole('button', { name: 'New recovery codes…' }).click();
    await page.getByRole('dialog', { name: 'New recovery codes' }).getByRole('button', { name: 'Make new codes' }).click();
    await factors.getByTestId('recovery-codes').waitFor();
    const codes = await factors.getByTestId('recovery-codes').locator('code').allTextContents();
    assert.equal(codes.length, 10);
    const [download] = await Promise.all([page.waitForEvent('download'), factors.getByRole('button', { name: 'Download codes' }).click()]);
    assert.equal(download.suggestedFilename(), 'recovery-codes.txt');
    assert.deepEqual((await readFile((await download.path())!, 'utf8')).trim().split('\n'), codes);
    await factors.getByRole('button', { name: 'I have stored them' }).click();
    assert.equal(await factors.getByTestId('recovery-codes').count(), 0, 'the codes are shown once');

    await factors.getByLabel('Name of the new factor (optional)').fill('Tablet');
    await factors.getByRole('button', { name: 'Add authenticator app' }).click();
    await factors.getByRole('img', { name: "QR code of the authenticator app's secret" }).waitFor();
    const tablet = new TotpDevice((await factors.getByTestId('totp-secret').textContent())!);
    assert.deepEqual(await accessibilityViolationsOf(page), [], 'the enrolment');
    await ui.shoot('second-factors');
    await factors.getByLabel('Code from the app').fill(tablet.next());
    await factors.getByRole('button', { name: 'Confirm' }).click();
    await factors.getByText('Tablet', { exact: true }).waitFor();
    assert.deepEqual((await factorsOf(admin.id)).map((factor) => factor.name).sort(), ['Phone', 'Tablet']);

    await factors.getByRole('listitem').filter({ hasText: 'Tablet' }).getByRole('button', { name: 'Remove…' }).click();
    await page.getByRole('dialog', { name: 'Remove Tablet' }).getByRole('button', { name: 'Remove factor' }).click();
    await factors.getByRole('status').getByText('Tablet was removed.').waitFor();
    assert.deepEqual((await factorsOf(admin.id)).map((factor) => factor.name), ['Phone']);

    // The login's second step: a wrong recovery code is refused, a right one signs in.
    await page.getByRole('button', { name: 'Log out' }).click();
    await ui.logIn(admin.email, admin.password);
    const second = page.getByRole('form', { name: 'Second factor' });
    await second.getByRole('button', { name: 'Use a recovery code instead' }).click();
    await second.getByLabel('Recovery code').fill('aaaa-bbbb-cccc-dddd');
    await second.getByRole('button', { name: 'Verify and log in' }).click();
    await second.getByRole('alert').getByText('The code, recovery code or passkey response does not verify.').waitFor();
    await page.setViewportSize({ width: 390, height: 844 });
    assert.deepEqual(await accessibilityViolationsOf(page), [], 'the second step at 390px');
    assert.ok((await ui.sidewaysOverflow()) <= 0, 'nothing off-screen at 390px');
    await ui.shoot('login-second-factor-390', 390, false);
    await second.getByLabel('Recovery code').fill(codes[0]!);
    await second.getByRole('button', { name: 'Verify and log in' }).click();
    await page.getByRole('heading', { name: 'Variants' }).waitFor();
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('enrols a passkey and signs in with it; an admin resets the factors from the user page', async () => {
    const { page } = ui;
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    const manager = await createUser(ui.testApp.app, { role: 'manager', name: 'Max Manager' });
    await page.getByRole('button', { name: 'Log out' }).click();
    await ui.logIn(manager.email, manager.password);
    await page.goto(`${ui.baseUrl}/admin/#/profile`);
    const factors = page.getByRole('region', { name: 'Second factors' });
    await factors.getByText('No second factor protects your account yet.').waitFor();
    await factors.getByLabel('Name of the new factor (optional)').fill('Laptop key');
    await factors.getByRole('button', { name: 'Add passkey' }).click();
    // The first factor brings recovery codes.
    await factors.getByTestId('recovery-codes').waitFor();
    await factors.getByRole('button', { name: 'I have stored them' }).click();
    await factors.getByText('Laptop key', { exact: true }).waitFor();
    assert.deepEqual((await factorsOf(manager.id)).map((factor) => [factor.type, factor.name]), [['webauthn', 'Laptop key']]);
    await page.setViewportSize({ width: 390, height: 844 });
    assert.ok((await ui.sidewaysOverflow()) <= 0, 'nothing off-screen at 390px');
    assert.deepEqual(await accessibilityViolationsOf(page), [], 'the second factors at 390px');
    await page.setViewportSize({ width: 1280, height: 900 });

    await page.getByRole('button', { name: 'Log out' }).click();
    await ui.logIn(manager.email, manager.password);
    await page.getByRole('form', { name: 'Second factor' }).getByRole('button', { name: 'Use a passkey' }).click();
    await page.getByRole('heading', { name: 'Variants' }).waitFor();

    await page.getByRole('button', { name: 'Log out' }).click();
    await ui.logIn();
    await page.getByRole('heading', { name: 'Variants' }).waitFor();
    await page.goto(`${ui.baseUrl}/admin/#/users/${manager.id}`);
    await page.getByRole('button', { name: 'Reset second factors' }).click();
    await page.getByRole('dialog', { name: 'Reset the second factors of Max Manager' }).getByRole('button', { name: 'Reset second factors' }).click();
    await page.getByRole('status').getByText(`The second factors of ${manager.email} were reset.`).waitFor();
    assert.deepEqual(await factorsOf(manager.id), []);
  });
});
