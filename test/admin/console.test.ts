import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ADMIN_EMAIL, ADMIN_PASSWORD, buildTestApp, createUser, type Session, type TestApp } from '../helpers/test-app.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
// `npm run screenshots` refreshes the README's pictures; ordinary runs keep theirs out of the tree.
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS ? 'docs/screenshots' : path.join(tmpdir(), 'shop-console-screenshots');

describe('admin console in a real browser', { skip: !existsSync(CHROMIUM) && `no Chromium at ${CHROMIUM}` }, () => {
  let testApp: TestApp;
  let browser: Browser;
  let page: Page;
  let baseUrl: string;
  let customer: Session;

  before(async () => {
    testApp = await buildTestApp();
    await testApp.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(testApp.app.server.address() as AddressInfo).port}`;
    customer = await createUser(testApp.app, { name: 'Carla Customer' });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(10_000);
    page.on('dialog', (dialog) => void dialog.accept());
    await mkdir(SCREENSHOTS, { recursive: true });
  });
  after(async () => {
    await browser?.close();
    await testApp?.close();
  });

  const db = () => testApp.app.db;
  const shoot = async (name: string, width = 1280) => {
    await page.setViewportSize({ width, height: width > 500 ? 900 : 844 });
    await page.screenshot({ path: `${SCREENSHOTS}/${name}.png`, fullPage: true });
  };

  it('logs in as the bootstrap admin', async () => {
    await page.goto(`${baseUrl}/admin/`);
    await shoot('login');
    const form = page.getByRole('form', { name: 'Log in' });
    await form.getByLabel('Email').fill(ADMIN_EMAIL);
    await form.getByLabel('Password').fill('not-the-password');
    await form.getByRole('button', { name: 'Log in' }).click();
    await page.getByText('The email or password is wrong.').waitFor();
    await form.getByLabel('Password').fill(ADMIN_PASSWORD);
    await form.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Variants' }).waitFor();
  });

  it('creates a variant, finds it by SKU and edits it with If-Match', async () => {
    const create = page.getByRole('form', { name: 'Create variant' });
    await create.getByLabel('Product id').fill('console-shirt');
    await create.getByLabel('SKU').fill('CONSOLE-SHIRT-M');
    await create.getByLabel('Name').fill('Console shirt, M');
    await create.getByLabel('Price in cents').fill('2999');
    await create.getByLabel(/^Attributes/).fill('size=M, colour=blue');
    await create.getByRole('button', { name: 'Create variant' }).click();
    await page.getByText('Created CONSOLE-SHIRT-M.').waitFor();
    const stored = await db().selectFrom('variants').selectAll().where('sku', '=', 'CONSOLE-SHIRT-M').executeTakeFirstOrThrow();
    assert.deepEqual(stored.attributes, { size: 'M', colour: 'blue' });
    assert.match(stored.id, /^[0-9a-f-]{36}$/);

    const find = page.getByRole('search', { name: 'Find by SKU' });
    await find.getByLabel('SKU').fill('console-shirt-m');
    await find.getByRole('button', { name: 'Find by SKU' }).click();
    await page.getByRole('cell', { name: 'Console shirt, M' }).waitFor();
    await shoot('variants');

    await page.getByRole('button', { name: 'Edit CONSOLE-SHIRT-M' }).click();
    const edit = page.getByRole('form', { name: 'Edit variant' });
    await edit.getByLabel('Name').fill('Console shirt, medium');
    // Someone else edits it meanwhile: the console's If-Match is now stale.
    await db().updateTable('variants').set({ version: stored.version + 1 }).where('id', '=', stored.id).execute();
    await edit.getByRole('button', { name: 'Save variant' }).click();
    await edit.getByText('Someone else changed this variant.').waitFor();
    await edit.getByRole('button', { name: 'Reload it' }).click();
    // The reload clears the message once the fresh copy (and its ETag) is in the form.
    await edit.getByText('Someone else changed this variant.').waitFor({ state: 'detached' });
    await edit.getByLabel('Name').fill('Console shirt, medium');
    await edit.getByRole('button', { name: 'Save variant' }).click();
    await page.getByRole('cell', { name: 'Console shirt, medium' }).waitFor();
    const edited = await db().selectFrom('variants').selectAll().where('id', '=', stored.id).executeTakeFirstOrThrow();
    assert.equal(edited.name, 'Console shirt, medium');
    assert.equal(edited.version, stored.version + 2);
  });

  it('shows a validation error next to the field that caused it', async () => {
    const create = page.getByRole('form', { name: 'Create variant' });
    await create.getByLabel('Product id').fill('console-shirt');
    await create.getByLabel('SKU').fill('CONSOLE-SHIRT-L');
    await create.getByLabel('Name').fill('Console shirt, L');
    await create.getByLabel('Price in cents').fill('twelve');
    await create.getByRole('button', { name: 'Create variant' }).click();
    const priceError = create.locator('.field', { has: page.getByLabel('Price in cents') }).getByRole('alert');
    await priceError.waitFor();
    assert.match(await priceError.innerText(), /integer/);
    assert.equal(await db().selectFrom('variants').select('id').where('sku', '=', 'CONSOLE-SHIRT-L').executeTakeFirst(), undefined);
    await shoot('validation-error');
  });

  it("adjusts a user's balance once for a double click, and suspends and reactivates the user", async () => {
    await page.getByRole('link', { name: 'Users' }).click();
    const search = page.getByRole('search');
    await search.getByLabel('Search').fill(customer.email);
    await search.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: 'Carla Customer' }).click();
    await page.getByRole('heading', { name: 'Carla Customer' }).waitFor();

    const adjust = page.getByRole('form', { name: 'Adjust balance' });
    await adjust.getByLabel(/^Amount/).fill('1500');
    await adjust.getByLabel('Reason').fill('Goodwill credit');
    await adjust.getByRole('button', { name: 'Apply' }).dblclick();
    await page.getByRole('cell', { name: 'Goodwill credit' }).waitFor();
    const entries = await db().selectFrom('balance_ledger').selectAll().where('user_id', '=', customer.id).execute();
    assert.equal(entries.length, 1, 'the double click changed the balance once');
    assert.equal(entries[0]?.delta, 1500);
    await page.getByTestId('balance').getByText('$15.00').waitFor();

    await changeStatus('suspended');
    await shoot('user');
    await changeStatus('active');
  });

  async function changeStatus(status: 'active' | 'suspended') {
    const [response] = await Promise.all([
      page.waitForResponse((candidate) => candidate.url().endsWith(`/api/users/${customer.id}/status`) && candidate.request().method() === 'PUT'),
      page.getByLabel('Status').selectOption(status),
    ]);
    assert.equal(response.status(), 200);
    const row = await db().selectFrom('users').select('status').where('id', '=', customer.id).executeTakeFirstOrThrow();
    assert.equal(row.status, status);
  }

  it('lists users and fits a 390px screen', async () => {
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: 'Carla Customer' }).waitFor();
    await shoot('users');
    await shoot('users-390', 390);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px at 390px`);
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('returns to the login page when the session ends (401), and logs out', async () => {
    const admin = await testApp.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    // A password change elsewhere ends every other session of the admin, the browser's included.
    const changed = await testApp.app.inject({
      method: 'PUT',
      url: '/api/users/change-password',
      headers: { authorization: `Bearer ${admin.json().access_token}` },
      payload: { current_password: ADMIN_PASSWORD, new_password: 'another-admin-password' },
    });
    assert.equal(changed.statusCode, 200);
    await page.getByRole('link', { name: 'Variants' }).click();
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByRole('form', { name: 'Log in' }).waitFor();

    const form = page.getByRole('form', { name: 'Log in' });
    await form.getByLabel('Email').fill(ADMIN_EMAIL);
    await form.getByLabel('Password').fill('another-admin-password');
    await form.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('link', { name: 'My profile' }).click();
    await page.getByRole('heading', { name: 'My profile' }).waitFor();
    await shoot('profile');
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('form', { name: 'Log in' }).waitFor();
  });
});
