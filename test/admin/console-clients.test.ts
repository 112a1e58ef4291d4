import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { noChromium, useConsole } from '../helpers/console-browser.js';
import { loginAdmin } from '../helpers/test-app.js';

/** #33 point 2: API clients for admins, against the real API, whose secrets are then used as a service would. */
describe('admin console: API clients, in a real browser', { skip: noChromium }, () => {
  const ui = useConsole();
  /** What the API answers a request made with `secret` as the bearer token. */
  const statusWith = async (secret: string, url: string) => (await ui.testApp.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${secret}` } })).statusCode;
  const clientRow = (name: string) => ui.db().selectFrom('api_clients').selectAll().where('name', '=', name).executeTakeFirstOrThrow();

  it('creates a client with scopes chosen by area, and shows its secret once, which works with those scopes only', async () => {
    const { page } = ui;
    await ui.logIn();
    await page.getByRole('link', { name: 'API clients' }).click();
    await page.getByRole('heading', { name: 'API clients', exact: true }).waitFor();
    assert.deepEqual(await page.getByRole('navigation', { name: 'Main' }).locator('a[aria-current="page"]').allInnerTexts(), ['API clients']);
    const create = page.getByRole('form', { name: 'Create API client' });
    await create.getByLabel('Name', { exact: true }).fill('Checkout');
    await create.getByRole('button', { name: 'Create API client' }).click();
    // No scope chosen: the API's message shows under the scopes.
    await create.getByRole('group', { name: /^Scopes/ }).getByRole('alert').waitFor();

    await create.getByRole('group', { name: 'inventory' }).getByLabel('read').check();
    await create.getByRole('group', { name: 'reservations' }).getByLabel('write').check();
    await create.getByLabel(/^Requests a minute/).fill('600');
    await create.getByRole('button', { name: 'Create API client' }).click();
    const secret = await page.getByTestId('client-secret').innerText();
    assert.match(secret, /^shop_sk_[A-Za-z0-9_-]{43}$/);
    assert.equal(await create.getByRole('group', { name: /^Scopes/ }).getByRole('alert').count(), 0, 'the earlier problem is gone');
    await page.getByRole('cell', { name: `${secret.slice(0, 12)}…` }).waitFor();
    await page.getByRole('cell', { name: 'inventory:read, reservations:write' }).waitFor();
    const stored = await clientRow('Checkout');
    assert.deepEqual([stored.scopes, stored.rate_limit, stored.status], [['inventory:read', 'reservations:write'], 600, 'active']);
    assert.equal(await statusWith(secret, '/api/reservations'), 200, 'inventory:read lists reservations');
    assert.equal(await statusWith(secret, '/api/users'), 403, 'no users:read');
    // #56 friction 1: the client id that POST /api/oauth/token takes with the secret is shown beside it, copied, and in the list.
    assert.equal(await page.getByTestId('client-id').innerText(), stored.id);
    await create.getByRole('button', { name: 'Copy the client id', exact: true }).click();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), stored.id);
    const token = await ui.testApp.app.inject({
      method: 'POST',
      url: '/api/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ grant_type: 'client_credentials', client_id: stored.id, client_secret: secret }).toString(),
    });
    assert.equal(token.statusCode, 200, 'the id and secret shown obtain a token');
    await page.getByRole('row').filter({ hasText: 'Checkout' }).getByRole('cell', { name: stored.id }).waitFor();
    await ui.shoot('api-clients');
  });

  it('makes a new secret with the chosen overlap, shown once, and deletes a secret', async () => {
    const { page } = ui;
    const first = await page.getByTestId('client-secret').innerText();
    await page.getByRole('button', { name: 'New secret for Checkout…' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('combobox').selectOption({ label: 'stop at once' });
    await dialog.getByRole('button', { name: 'Make a new secret' }).click();
    const second = await page.getByTestId('rolled-secret').innerText();
    assert.match(second, /^shop_sk_/);
    assert.notEqual(second, first);
    const { id } = await clientRow('Checkout');
    assert.equal(await page.getByTestId('rolled-client-id').innerText(), id, 'the new secret comes with the client id it goes with');
    assert.equal(await statusWith(first, '/api/reservations'), 401, 'the other secret stopped at once');
    assert.equal(await statusWith(second, '/api/reservations'), 200);

    const secrets = page.getByRole('region', { name: 'Secrets of Checkout' });
    await secrets.getByRole('cell', { name: `${second.slice(0, 12)}…`, exact: true }).waitFor();
    assert.equal(await secrets.locator('tbody tr').count(), 2, 'the expired secret is listed with its expiry');
    assert.equal(await secrets.getByTestId('shown-client-id').innerText(), id, "the client's panel shows its id");
    await secrets.getByRole('button', { name: `Delete the secret ${first.slice(0, 12)}…` }).click();
    await dialog.getByRole('button', { name: 'Delete secret' }).click();
    await page.getByRole('status').getByText(`Deleted the secret ${first.slice(0, 12)}… of Checkout.`).waitFor();
    assert.equal(await secrets.locator('tbody tr').count(), 1);
  });

  it('disables a client, whose secret is then refused, and deletes it; clean by axe and at 390px', async () => {
    const { page } = ui;
    const secret = await page.getByTestId('rolled-secret').innerText();
    await page.getByRole('button', { name: 'Disable Checkout…' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('status').getByText('Disabled Checkout.').waitFor();
    assert.equal((await clientRow('Checkout')).status, 'disabled');
    assert.equal(await statusWith(secret, '/api/reservations'), 401);
    await page.getByRole('cell', { name: 'disabled', exact: true }).waitFor();

    assert.deepEqual(await ui.accessibilityViolations(), [], 'the API clients page');
    await ui.shoot('api-clients-390', 390);
    assert.ok((await ui.sidewaysOverflow()) <= 0, 'the page does not scroll sideways at 390px');
    await page.setViewportSize({ width: 1280, height: 900 });

    await page.getByRole('button', { name: 'Delete Checkout…' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete client' }).click();
    await page.getByRole('status').getByText('Deleted Checkout.').waitFor();
    await page.getByText('No API clients yet.').waitFor();
    assert.notEqual((await clientRow('Checkout')).deleted_at, null);
  });

  it('names an API client as the actor in the audit log, and finds its changes by its name (#33 point 8)', async () => {
    const { page } = ui;
    const admin = await loginAdmin(ui.testApp.app);
    const created = await ui.testApp.app.inject({ method: 'POST', url: '/api/clients', headers: admin.auth, payload: { name: 'Storefront', scopes: ['reservations:write'] } });
    assert.equal(created.statusCode, 201, created.body);
    const variant = await ui.testApp.app.inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: { product_id: 'audit', sku: 'AUDIT-1', name: 'Audited', price: 100, stock: 5 } });
    const reserved = await ui.testApp.app.inject({
      method: 'POST',
      url: '/api/reservations',
      headers: { authorization: `Bearer ${created.json().secret}` },
      payload: { lines: [{ variant_id: variant.json().id, quantity: 1 }], reference: 'cart-audit' },
    });
    assert.equal(reserved.statusCode, 201, reserved.body);
    await page.getByRole('link', { name: 'Audit log' }).click();
    const filters = page.getByRole('search', { name: 'Filter events' });
    await filters.getByLabel('Who (email or API client)').fill('storefront');
    await filters.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('1 event', { exact: true }).waitFor();
    const row = page.getByRole('row').filter({ hasText: 'reservation.created' });
    await row.getByRole('link', { name: 'Storefront (API client)' }).waitFor();
  });
});
