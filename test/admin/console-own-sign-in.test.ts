import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { inTransaction } from '../../src/db/transaction.js';
import { SERVICE_CONTEXT } from '../../src/events/event-recorder.js';
import { linkIdentity } from '../../src/federation/identity-service.js';
import { grantConsent } from '../../src/oauth/consent-service.js';
import { noChromium, useConsole } from '../helpers/console-browser.js';
import { createUser, loginAdmin, type Session } from '../helpers/test-app.js';
import { appSession, basic, postForm, registerClient } from '../oauth/oauth-helpers.js';

/** #56: one's own sign-in methods, linked accounts and app consents on the profile, and what staff see of another user's. */
describe('admin console: how people sign in, in a real browser', { skip: noChromium }, () => {
  const ui = useConsole();
  let manager: Session;
  /** A provider as a save leaves it: these screens need no live discovery document. */
  const provider = async (name: string) => {
    const id = randomUUID();
    const now = new Date();
    await ui
      .db()
      .insertInto('identity_providers')
      .values({ id, name, issuer: `https://${name.toLowerCase()}.example.com`, client_id: 'shop', client_secret: 'plain:secret', scopes: ['openid'], button_label: `Sign in with ${name}`, discovery: '{}', discovered_at: now, discovery_attempted_at: now })
      .execute();
    return id;
  };
  const identitiesOf = (userId: string) => ui.db().selectFrom('user_identities').innerJoin('identity_providers', 'identity_providers.id', 'user_identities.provider_id').select('identity_providers.name').where('user_id', '=', userId).execute();

  it('shows the own sign-in methods and linked accounts, and unlinks one', async () => {
    const { page } = ui;
    manager = await createUser(ui.testApp.app, { role: 'manager', name: 'Mia Manager' });
    const [google, apple] = [await provider('Google'), await provider('Apple')];
    await inTransaction(ui.db(), async (trx) => {
      await linkIdentity(trx, { userId: manager.id, providerId: google, subject: 'google-sub', email: 'mia@gmail.example', usedNow: true }, SERVICE_CONTEXT);
      await linkIdentity(trx, { userId: manager.id, providerId: apple, subject: 'apple-sub', email: null, usedNow: false }, SERVICE_CONTEXT);
    });
    await ui.logIn(manager.email, manager.password);
    await page.getByRole('link', { name: 'My profile' }).click();
    const signIn = page.getByRole('region', { name: 'How you sign in' });
    const methods = signIn.getByTestId('sign-in-methods');
    await methods.getByText('Google, Apple').waitFor();
    assert.deepEqual(await methods.locator('dd').allInnerTexts(), [
      'set',
      `a code sent to ${manager.email} always signs you in`,
      'none',
      'none: signing in asks for nothing more',
      'Google, Apple',
    ]);
    const linked = signIn.getByRole('region', { name: 'Linked accounts' });
    await linked.getByRole('cell', { name: 'mia@gmail.example', exact: true }).waitFor();
    assert.equal(await linked.locator('tbody tr').count(), 2);

    await linked.getByRole('button', { name: 'Unlink Google…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Unlink your Google account' });
    await dialog.getByText('Your password still signs you in.').waitFor();
    await dialog.getByRole('button', { name: 'Unlink' }).click();
    await signIn.getByRole('status').getByText('Unlinked Google.').waitFor();
    assert.deepEqual(await identitiesOf(manager.id), [{ name: 'Apple' }]);
    await methods.getByText('Apple', { exact: true }).waitFor();
    assert.equal(await linked.locator('tbody tr').count(), 1);
  });

  it("shows the apps one allowed in plain words, and withdraws one: its consent goes and its session ends; clean by axe and at 390px", async () => {
    const { page } = ui;
    const admin = await loginAdmin(ui.testApp.app);
    const partner = await registerClient(ui.testApp.app, admin, 'confidential', ['openid', 'email', 'offline_access'], 'Partner shop');
    await inTransaction(ui.db(), (trx) => grantConsent(trx, manager.id, partner.id, ['openid', 'email', 'offline_access'], SERVICE_CONTEXT));
    const tokens = await appSession(ui.db(), ui.testApp.config, manager, partner.id, ['openid', 'email', 'offline_access']);
    const isActive = async () => (await postForm(ui.testApp.app, '/oauth/introspect', { token: tokens.refresh_token }, basic(partner.id, partner.secret!))).json().active;
    assert.equal(await isActive(), true);

    await page.reload();
    const apps = page.getByRole('region', { name: 'Apps you allowed' });
    const row = apps.getByRole('row').filter({ hasText: 'Partner shop' });
    await row.getByRole('cell', { name: 'sign you in; your email address; stay signed in', exact: true }).waitFor();

    assert.deepEqual(await ui.accessibilityViolations(), [], 'the profile with sign-in methods, linked accounts and apps');
    await ui.shoot('profile-sign-in', 1280);
    await ui.shoot('profile-sign-in-390', 390);
    assert.ok((await ui.sidewaysOverflow()) <= 0, 'the page does not scroll sideways at 390px');
    await page.setViewportSize({ width: 1280, height: 900 });

    await row.getByRole('button', { name: "Withdraw Partner shop's access…" }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Withdraw access' }).click();
    await apps.getByRole('status').getByText("Withdrew Partner shop's access.").waitFor();
    await apps.getByText(/^No app has your consent/).waitFor();
    // Measured once the confirmation has closed and the provider list has loaded: the page as it stays.
    await page.getByRole('dialog').waitFor({ state: 'hidden' });
    await page.getByRole('button', { name: 'Connect Google' }).waitFor();
    assert.deepEqual(await ui.db().selectFrom('app_consents').select('client_id').where('user_id', '=', manager.id).execute(), []);
    assert.equal(await isActive(), false, "the app's session for the user ended");
  });

  it("shows staff whether another user has a password, and admins what is linked now and its history", async () => {
    const { page } = ui;
    // As a sign-up by email code or another provider leaves an account: no password.
    await ui.db().updateTable('users').set({ password_hash: null }).where('id', '=', manager.id).execute();
    await page.getByRole('button', { name: 'Log out' }).click();
    await ui.logIn();
    await page.getByRole('heading', { name: 'Variants' }).waitFor();
    await page.goto(`${ui.baseUrl}/admin/#/users/${manager.id}`);
    const section = page.getByRole('region', { name: 'Sign-in' });
    await section.getByTestId('has-password').getByText(/^none: signs in by email code/).waitFor();
    // What is linked now: Apple (Google was unlinked), and no app (the consent was withdrawn).
    const now = section.getByRole('region', { name: 'Linked now' });
    await now.getByRole('cell', { name: 'Apple', exact: true }).waitFor();
    assert.deepEqual(await now.locator('tbody td[data-label="Provider"]').allInnerTexts(), ['Apple']);
    await now.getByText('No app allowed.').waitFor();
    const history = section.getByRole('region', { name: 'Linked accounts and apps: history' });
    await history.getByText('Withdrew the consent of Partner shop (API client)').waitFor();
    const lines = await history.locator('tbody td[data-label="What"]').allInnerTexts();
    assert.deepEqual(
      [...lines].sort(),
      [
        'Allowed Partner shop (API client) (openid, email, offline_access)',
        'Linked an account of Apple (identity provider)',
        'Linked an account of Google (identity provider)',
        'Unlinked the account of Google (identity provider)',
        'Withdrew the consent of Partner shop (API client)',
      ],
    );
    assert.deepEqual(await ui.accessibilityViolations(), [], "a user's page with the sign-in section");
    await ui.shoot('user-sign-in', 1280);
    await ui.shoot('user-sign-in-390', 390);
    assert.ok((await ui.sidewaysOverflow()) <= 0, 'the page does not scroll sideways at 390px');
  });

  it('gives a customer the same: the apps they allowed, withdrawn from the staff-only page, without sideways scrolling at 390px', async () => {
    const { page } = ui;
    const customer = await createUser(ui.testApp.app, { name: 'Cleo Customer' });
    const partner = await ui.db().selectFrom('api_clients').select('id').where('name', '=', 'Partner shop').executeTakeFirstOrThrow();
    await inTransaction(ui.db(), (trx) => grantConsent(trx, customer.id, partner.id, ['openid', 'email'], SERVICE_CONTEXT));
    await page.getByRole('button', { name: 'Log out' }).click();
    await ui.logIn(customer.email, customer.password);
    await page.getByRole('heading', { name: 'This console is for staff' }).waitFor();
    await page.setViewportSize({ width: 390, height: 844 });
    const apps = page.getByRole('region', { name: 'Apps you allowed' });
    await apps.getByRole('button', { name: "Withdraw Partner shop's access…" }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Withdraw access' }).click();
    await apps.getByText(/^No app has your consent/).waitFor();
    // Measured once the confirmation has closed and the provider list has loaded: the page as it stays.
    await page.getByRole('dialog').waitFor({ state: 'hidden' });
    await page.getByRole('button', { name: 'Connect Google' }).waitFor();
    assert.deepEqual(await ui.db().selectFrom('app_consents').select('client_id').where('user_id', '=', customer.id).execute(), []);
    await page.getByRole('region', { name: 'How you sign in' }).getByText('none linked').waitFor();
    assert.ok((await ui.sidewaysOverflow()) <= 0, 'the page does not scroll sideways at 390px');
    assert.deepEqual(await ui.accessibilityViolations(), [], 'the staff-only page with sign-in and apps');
  });
});
