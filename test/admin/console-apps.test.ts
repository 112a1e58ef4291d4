import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { noChromium, useConsole } from '../helpers/console-browser.js';
import { basic, postForm } from '../oauth/oauth-helpers.js';

/** #56: apps (API.md section 18) on the API clients screen: their kind, redirect URIs, consent, logo and scopes, and no secret for a public one. */
describe('admin console: apps on the API clients screen, in a real browser', { skip: noChromium }, () => {
  const ui = useConsole();
  const clientRow = (name: string) => ui.db().selectFrom('api_clients').selectAll().where('name', '=', name).executeTakeFirstOrThrow();
  const secretsOf = (clientId: string) => ui.db().selectFrom('api_client_secrets').select('id').where('client_id', '=', clientId).execute();

  it('creates a public app with its redirect URIs, consent, logo and sign-in scopes; it has no secret, and its id is shown to copy', async () => {
    const { page } = ui;
    await ui.logIn();
    await page.getByRole('link', { name: 'API clients' }).click();
    const create = page.getByRole('form', { name: 'Create API client' });
    await create.getByRole('radio', { name: /^Public app/ }).check();
    await create.getByLabel('Name', { exact: true }).fill('Shop app');
    // Sign-in scopes are offered to apps only, in plain words.
    const signIn = create.getByRole('group', { name: 'sign-in' });
    for (const scope of ['openid', 'email', 'offline_access', 'account']) await signIn.getByRole('checkbox', { name: new RegExp(`^${scope} `) }).check();
    await create.getByLabel(/^Redirect URIs \(one a line/).fill('http://shop.example.com/callback');
    await create.getByRole('button', { name: 'Create API client' }).click();
    // The API's message about the item shows under the field, in its words.
    await create.getByText(/^Item 1: /).waitFor();
    assert.equal(await ui.db().selectFrom('api_clients').select('id').where('name', '=', 'Shop app').executeTakeFirst(), undefined, 'nothing was made');

    await create.getByLabel(/^Redirect URIs \(one a line/).fill('com.example.shop:/callback\nhttps://shop.example.com/callback');
    await create.getByRole('checkbox', { name: /The shop's own app/ }).check();
    await create.getByLabel(/^Logo URL/).fill('https://shop.example.com/logo.png');
    await create.getByRole('button', { name: 'Create API client' }).click();
    const shownId = await page.getByTestId('new-client-id').locator('code').innerText();
    assert.equal(await page.getByTestId('client-secret').count(), 0, 'a public app gets no secret');
    const stored = await clientRow('Shop app');
    assert.equal(shownId, stored.id);
    assert.deepEqual(
      [stored.type, stored.redirect_uris, stored.first_party, stored.logo_uri, stored.scopes],
      ['public', ['com.example.shop:/callback', 'https://shop.example.com/callback'], true, 'https://shop.example.com/logo.png', ['openid', 'email', 'offline_access', 'account']],
    );
    assert.deepEqual(await secretsOf(stored.id), []);

    const row = page.getByRole('row').filter({ hasText: 'Shop app' });
    await row.getByRole('cell', { name: 'Public app', exact: true }).waitFor();
    await row.getByRole('cell', { name: 'none (public app)' }).waitFor();
    assert.equal(await row.getByRole('button', { name: /^New secret/ }).count(), 0, 'no new secret for a public app');
    await row.getByRole('button', { name: 'Details of Shop app' }).click();
    const details = page.getByRole('region', { name: 'App Shop app' });
    await details.getByText('com.example.shop:/callback').waitFor();
    assert.equal(await page.getByRole('region', { name: 'Secrets of Shop app' }).count(), 0, 'no secrets panel');
    await details.getByRole('button', { name: 'Copy the client id of Shop app' }).click();
    await details.getByText('Copied.').waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), stored.id);
  });

  it('creates a confidential app whose secret, shown once, authenticates it; a service choice drops the sign-in scopes', async () => {
    const { page } = ui;
    const create = page.getByRole('form', { name: 'Create API client' });
    await create.getByRole('radio', { name: /^Confidential app/ }).check();
    await create.getByLabel('Name', { exact: true }).fill('Partner shop');
    await create.getByRole('group', { name: 'sign-in' }).getByRole('checkbox', { name: /^openid / }).check();
    await create.getByRole('group', { name: 'variants' }).getByLabel('read').check();
    await create.getByLabel(/^Redirect URIs \(one a line/).fill('https://partner.example.com/callback');
    await create.getByLabel('ID token signature').selectOption('EdDSA');
    await create.getByRole('button', { name: 'Create API client' }).click();
    const secret = await page.getByTestId('client-secret').innerText();
    const stored = await clientRow('Partner shop');
    assert.equal(await page.getByTestId('new-client-id').locator('code').innerText(), stored.id);
    assert.deepEqual([stored.type, stored.first_party, stored.scopes, stored.id_token_signed_response_alg], ['confidential', false, ['openid', 'variants:read'], 'EdDSA']);
    // The secret authenticates the app where apps use it: introspection answers it (an unknown token is inactive).
    const introspected = await postForm(ui.testApp.app, '/oauth/introspect', { token: 'not-a-token' }, basic(stored.id, secret));
    assert.equal(introspected.statusCode, 200, introspected.body);
    assert.deepEqual(introspected.json(), { active: false });
    const row = page.getByRole('row').filter({ hasText: 'Partner shop' });
    await row.getByRole('cell', { name: 'Confidential app', exact: true }).waitFor();
    await row.getByRole('button', { name: 'New secret for Partner shop…' }).waitFor();
    await row.getByRole('button', { name: 'Details of Partner shop' }).click();
    await page.getByRole('region', { name: 'App Partner shop' }).getByText('signed with EdDSA').waitFor();
    await page.getByRole('region', { name: 'Secrets of Partner shop' }).getByRole('cell', { name: `${secret.slice(0, 12)}…`, exact: true }).waitFor();

    assert.deepEqual(await ui.accessibilityViolations(), [], 'the API clients page with apps');
    await ui.shoot('apps', 1280);
    await ui.shoot('apps-390', 390);
    assert.ok((await ui.sidewaysOverflow()) <= 0, 'the page does not scroll sideways at 390px');
    await page.setViewportSize({ width: 1280, height: 900 });

    await create.getByRole('radio', { name: /^Confidential app/ }).check();
    await create.getByRole('group', { name: 'sign-in' }).getByRole('checkbox', { name: /^email / }).check();
    await create.getByRole('radio', { name: /^Service/ }).check();
    assert.equal(await create.getByRole('group', { name: 'sign-in' }).count(), 0, 'a service client is offered no sign-in scope');
    assert.equal(await create.getByLabel(/^Redirect URIs/).count(), 0);
    await create.getByRole('radio', { name: /^Public app/ }).check();
    assert.equal(await create.getByRole('group', { name: 'sign-in' }).getByRole('checkbox', { name: /^email / }).isChecked(), false, 'the sign-in scope went with the service choice');
  });

  it("edits an app's redirect URIs, consent, logo and scopes against the version shown; a bad URI is refused at its field and changes nothing", async () => {
    const { page } = ui;
    await page.getByRole('row').filter({ hasText: 'Shop app' }).getByRole('button', { name: 'Details of Shop app' }).click();
    const details = page.getByRole('region', { name: 'App Shop app' });
    await details.getByRole('button', { name: 'Edit settings' }).click();
    const edit = details.getByRole('form', { name: 'Settings of Shop app' });
    const redirects = edit.getByLabel(/^Redirect URIs \(one a line/);
    assert.equal(await redirects.inputValue(), 'com.example.shop:/callback\nhttps://shop.example.com/callback', 'the form starts from what is saved');
    await redirects.fill('com.example.shop:/callback\nhttps://shop.example.com/#fragment');
    await edit.getByRole('button', { name: 'Save settings' }).click();
    await edit.getByText(/^Item 2: /).waitFor();
    assert.deepEqual(await ui.accessibilityViolations(), [], "an app's settings being edited, with a problem");
    const before = await clientRow('Shop app');
    assert.equal(before.version, 1, 'nothing changed');

    await redirects.fill('com.example.shop:/callback\nhttp://127.0.0.1/callback');
    await edit.getByRole('checkbox', { name: /The shop's own app/ }).uncheck();
    await edit.getByLabel(/^Logo URL/).fill('');
    await edit.getByRole('group', { name: 'sign-in' }).getByRole('checkbox', { name: /^account / }).uncheck();
    await edit.getByRole('button', { name: 'Save settings' }).click();
    await details.getByText('http://127.0.0.1/callback').waitFor();
    assert.equal(await details.getByRole('form').count(), 0, 'the form closed');
    const after = await clientRow('Shop app');
    assert.deepEqual(
      [after.redirect_uris, after.first_party, after.logo_uri, after.scopes, after.version],
      [['com.example.shop:/callback', 'http://127.0.0.1/callback'], false, null, ['openid', 'email', 'offline_access'], 2],
    );
    await page.getByRole('row').filter({ hasText: 'Shop app' }).getByRole('cell', { name: 'openid, email, offline_access', exact: true }).waitFor();
  });
});
