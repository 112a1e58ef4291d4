import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { inTransaction } from '../../src/db/transaction.js';
import { SERVICE_CONTEXT } from '../../src/events/event-recorder.js';
import { linkIdentity } from '../../src/federation/identity-service.js';
import { noChromium, useConsole } from '../helpers/console-browser.js';
import { createUser, login } from '../helpers/test-app.js';
import type { TotpDevice } from '../helpers/totp-device.js';
import { startUpstreamProvider, type UpstreamProvider } from '../helpers/upstream-provider.js';
import { enrolTotp } from '../mfa/mfa-helpers.js';

const SECRET = 'upstream-client-secret-of-the-shop';

/** A loopback port nobody listens on (one just let go): an issuer whose discovery is unreachable. */
async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** #56: the identity providers of API.md section 20 for admins, against a real upstream OpenID provider, each write after a step-up. */
describe('admin console: identity providers, in a real browser', { skip: noChromium }, () => {
  const ui = useConsole();
  let upstream: UpstreamProvider;
  let device: TotpDevice;
  before(async () => {
    upstream = await startUpstreamProvider({ client: { client_id: 'shop', client_secret: SECRET, redirect_uris: ['http://127.0.0.1:3000/oauth/callback/any'] } });
  });
  after(() => upstream?.stop());
  const providerRow = (name: string) => ui.db().selectFrom('identity_providers').selectAll().where('name', '=', name).executeTakeFirst();

  it("refuses an issuer without a discovery document in plain words, after a step-up, and adds one whose discovery works; its secret is never shown", async () => {
    const { page } = ui;
    const admin = await createUser(ui.testApp.app, { role: 'admin', name: 'Ivy Admin' });
    // The browser's session starts before the admin has a factor, so a write asks for a step-up.
    await ui.logIn(admin.email, admin.password);
    await page.getByRole('heading', { name: 'Variants' }).waitFor();
    ({ device } = await enrolTotp(ui.testApp.app, await login(ui.testApp.app, admin.email, admin.password)));

    await page.getByRole('link', { name: 'Identity providers' }).click();
    await page.getByText(/^No identity providers yet/).waitFor();
    const form = page.getByRole('form', { name: 'Add identity provider' });
    await form.getByLabel('Name (what staff call it)').fill('Upstream');
    await form.getByLabel(/^Issuer/).fill(`http://127.0.0.1:${await closedPort()}`);
    await form.getByLabel(/^Client id/).fill('shop');
    await form.getByLabel(/^Client secret/).fill(SECRET);
    await form.getByLabel(/^Button label/).fill('Sign in with Upstream');
    await form.getByRole('button', { name: 'Add identity provider' }).click();
    const stepUp = page.getByRole('dialog', { name: 'Confirm it is you' });
    await stepUp.getByLabel('Code from your authenticator app').fill(device.next());
    await stepUp.getByRole('button', { name: 'Verify' }).click();
    const issuerProblem = form.getByText(/^The provider could not be used: the discovery document is unreachable\. The service reads http:\/\/127\.0\.0\.1:\d+\/\.well-known\/openid-configuration/);
    await issuerProblem.waitFor();
    assert.equal(await providerRow('Upstream'), undefined, 'nothing was saved');

    await form.getByLabel(/^Issuer/).fill(upstream.issuer);
    await form.getByRole('button', { name: 'Add identity provider' }).click();
    await page.getByRole('status').getByText('Added Upstream. Register its callback URL at the provider.').waitFor();
    const stored = await providerRow('Upstream');
    assert.ok(stored);
    assert.deepEqual([stored.issuer, stored.client_id, stored.scopes, stored.button_label, stored.enabled, stored.link_by_verified_email], [upstream.issuer, 'shop', ['openid', 'email', 'profile'], 'Sign in with Upstream', true, false]);
    assert.ok(stored.client_secret, 'a secret is kept');
    const row = page.getByRole('row').filter({ hasText: 'Sign in with Upstream' });
    await row.getByRole('cell', { name: 'client secret', exact: true }).waitFor();
    await row.getByText(`/oauth/callback/${stored.id}`).waitFor();
    assert.equal(await page.getByText(SECRET).count(), 0, 'the secret is not shown');
    assert.equal(await form.getByLabel(/^Client secret/).inputValue(), '', 'the form forgot it');
  });

  it("adds Apple with its team id, key id and private key instead of a client secret; a key that is not one is refused at its field", async () => {
    const { page } = ui;
    const form = page.getByRole('form', { name: 'Add identity provider' });
    await form.getByLabel('Name (what staff call it)').fill('Apple');
    await form.getByLabel(/^Issuer/).fill(upstream.issuer);
    await form.getByLabel(/^Client id/).fill('com.example.shop.signin');
    await form.getByRole('radio', { name: /^Apple key/ }).check();
    assert.equal(await form.getByLabel(/^Client secret/).count(), 0, 'no client secret for Apple');
    await form.getByLabel(/^Apple team id/).fill('TEAM123456');
    await form.getByLabel(/^Apple key id/).fill('KEY1234567');
    await form.getByLabel(/^Apple private key/).fill('not a key');
    await form.getByLabel(/^Scopes asked/).fill('openid email name');
    await form.getByLabel(/^Button label/).fill('Sign in with Apple');
    await form.getByRole('button', { name: 'Add identity provider' }).click();
    await form.getByText(/must be the PEM of a P-256 private key/).first().waitFor();
    assert.equal(await providerRow('Apple'), undefined);

    const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    await form.getByLabel(/^Apple private key/).fill(key);
    await form.getByRole('button', { name: 'Add identity provider' }).click();
    await page.getByRole('status').getByText('Added Apple. Register its callback URL at the provider.').waitFor();
    const stored = await providerRow('Apple');
    assert.ok(stored);
    assert.deepEqual([stored.apple_team_id, stored.apple_key_id, stored.client_secret, stored.scopes], ['TEAM123456', 'KEY1234567', null, ['openid', 'email', 'name']]);
    assert.ok(stored.apple_private_key);
    await page.getByRole('row').filter({ hasText: 'Sign in with Apple' }).getByRole('cell', { name: 'Apple key KEY1234567 (team TEAM123456)', exact: true }).waitFor();
    assert.equal(await page.getByText('BEGIN PRIVATE KEY').count(), 0, 'the key is not shown');
  });

  it('disables and enables a provider, and deletes one with its linked identities; clean by axe and at 390px', async () => {
    const { page } = ui;
    await page.getByRole('button', { name: 'Disable Upstream…' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('status').getByText('Disabled Upstream.').waitFor();
    assert.equal((await providerRow('Upstream'))?.enabled, false);
    await page.getByRole('row').filter({ hasText: 'Sign in with Upstream' }).getByRole('cell', { name: 'disabled', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Enable Upstream…' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('status').getByText('Enabled Upstream.').waitFor();
    assert.equal((await providerRow('Upstream'))?.enabled, true);

    const apple = (await providerRow('Apple'))!;
    const customer = await createUser(ui.testApp.app);
    await inTransaction(ui.db(), (trx) => linkIdentity(trx, { userId: customer.id, providerId: apple.id, subject: 'apple-sub', email: customer.email, usedNow: true }, SERVICE_CONTEXT));
    await page.getByRole('button', { name: 'Delete Apple…' }).click();
    const dialog = page.getByRole('dialog');
    assert.equal(await dialog.getByRole('button', { name: 'Delete provider' }).isDisabled(), true, 'its name must be typed first');
    await dialog.getByLabel('Type Apple to confirm').fill('Apple');
    await dialog.getByRole('button', { name: 'Delete provider' }).click();
    await page.getByRole('status').getByText('Deleted Apple.').waitFor();
    assert.equal(await providerRow('Apple'), undefined);
    assert.deepEqual(await ui.db().selectFrom('user_identities').select('id').where('user_id', '=', customer.id).execute(), [], 'its identities went with it');
    assert.equal(await page.getByRole('row').filter({ hasText: 'Sign in with Apple' }).count(), 0);

    assert.deepEqual(await ui.accessibilityViolations(), [], 'the identity providers page');
    await ui.shoot('identity-providers', 1280);
    await ui.shoot('identity-providers-390', 390);
    assert.ok((await ui.sidewaysOverflow()) <= 0, 'the page does not scroll sideways at 390px');
  });
});
