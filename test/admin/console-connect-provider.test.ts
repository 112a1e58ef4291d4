import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { noChromium, useConsole } from '../helpers/console-browser.js';
import { createUser, loginAdmin } from '../helpers/test-app.js';
import { signInAtUpstreamPage } from '../helpers/upstream-browser.js';
import { startUpstreamProvider, type UpstreamProvider } from '../helpers/upstream-provider.js';

const SECRET = 'upstream-client-secret-of-the-shop';

/** API.md section 20: staff connect their account at another provider from the profile, in a real browser, against oidc-provider. */
describe('admin console: connecting another provider from the profile', { skip: noChromium }, () => {
  const ui = useConsole();
  let upstream: UpstreamProvider;
  let providerId: string;

  before(async () => {
    upstream = await startUpstreamProvider({
      client: { client_id: 'shop', client_secret: SECRET, redirect_uris: [`${ui.baseUrl}/oauth/callback/any`] },
      redirectUriPrefix: `${ui.baseUrl}/oauth/callback/`,
    });
    const admin = await loginAdmin(ui.testApp.app);
    const created = await ui.testApp.app.inject({ method: 'POST', url: '/api/identity-providers', headers: admin.auth, payload: { name: 'Upstream', issuer: upstream.issuer, client_id: 'shop', client_secret: SECRET, button_label: 'Continue with Upstream' } });
    assert.equal(created.statusCode, 201, created.body);
    providerId = created.json().id;
  });
  after(() => upstream?.stop());

  it("a manager presses Connect, signs in at the provider, and comes back to the profile with the account linked", async () => {
    const { page } = ui;
    const manager = await createUser(ui.testApp.app, { role: 'manager', name: 'Mia Manager' });
    const account = { sub: `sub-${randomUUID()}`, email: `mia-${randomUUID().slice(0, 8)}@upstream.example`, email_verified: true };
    upstream.accounts.set(account.sub, account);
    await ui.logIn(manager.email, manager.password);
    await page.getByRole('link', { name: 'My profile' }).click();
    const linked = page.getByRole('region', { name: 'Linked accounts' });
    await linked.getByText('No account of another provider').waitFor();
    await linked.getByRole('button', { name: 'Connect Upstream' }).click();

    // oidc-provider's own login and consent pages: the person signs in there.
    await signInAtUpstreamPage(page, upstream.issuer, account.sub);

    await page.waitForURL((url) => url.href.startsWith(`${ui.baseUrl}/admin/`));
    await linked.getByRole('status').getByText('Your Upstream account is now linked: it signs you in.').waitFor();
    assert.equal(new URL(page.url()).hash, '#/profile', 'said once: a reload says nothing more');
    await linked.getByRole('cell', { name: account.email, exact: true }).waitFor();
    assert.equal(await linked.getByRole('button', { name: 'Connect Upstream' }).count(), 0, 'a linked provider is not offered again');
    const identities = await ui.db().selectFrom('user_identities').select(['user_id', 'provider_id', 'subject']).where('user_id', '=', manager.id).execute();
    assert.deepEqual(identities, [{ user_id: manager.id, provider_id: providerId, subject: account.sub }]);
    assert.deepEqual(await ui.accessibilityViolations(), []);
  });
});
