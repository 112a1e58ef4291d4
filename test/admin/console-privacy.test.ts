import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { accessibilityViolationsOf, noChromium, useConsole } from '../helpers/console-browser.js';
import { createUser } from '../helpers/test-app.js';

/** The file a click on `button` downloads: its name and its JSON. */
async function downloaded(page: Page, button: Locator): Promise<{ name: string; data: Record<string, any> }> {
  const [download] = await Promise.all([page.waitForEvent('download'), button.click()]);
  return { name: download.suggestedFilename(), data: JSON.parse(await readFile((await download.path())!, 'utf8')) };
}

/** #33 point 4: privacy requests, served by an admin on a user's page, and by anyone for their own account. */
describe('admin console: privacy requests, in a real browser', { skip: noChromium }, () => {
  const ui = useConsole();
  const userRow = (id: string) => ui.db().selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  it("exports a user's data as a file, and erases the user after a typed confirmation with a reason", async () => {
    const { page } = ui;
    const eve = await createUser(ui.testApp.app, { name: 'Eve Example' });
    await ui.logIn();
    await page.getByRole('heading', { name: 'Variants' }).waitFor();
    await page.goto(`${ui.baseUrl}/admin/#/users/${eve.id}`);
    const privacy = page.getByRole('region', { name: 'Privacy requests' });
    const file = await downloaded(page, privacy.getByRole('button', { name: 'Export their data' }));
    assert.equal(file.name, `user-${eve.id}.json`);
    assert.deepEqual([file.data.user.id, file.data.user.email], [eve.id, eve.email]);
    assert.ok(Array.isArray(file.data.sessions) && Array.isArray(file.data.ledger) && Array.isArray(file.data.events));
    await privacy.getByRole('status').getByText(`Saved user-${eve.id}.json.`).waitFor();
    const exported = await ui.db().selectFrom('events').select('type').where('subject_id', '=', eve.id).where('type', '=', 'user.data_exported').execute();
    assert.equal(exported.length, 1, 'the export is in the audit log');

    await privacy.getByRole('button', { name: 'Erase…' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Reason').fill('Erasure request by email, ticket 881');
    const confirm = dialog.getByRole('button', { name: 'Erase for good' });
    assert.equal(await confirm.isDisabled(), true, 'nothing is erased before the email is typed');
    await dialog.getByLabel(`Type ${eve.email} to confirm`).fill('someone@example.com');
    assert.equal(await confirm.isDisabled(), true);
    assert.deepEqual(await accessibilityViolationsOf(page), [], 'the erasure dialog');
    await dialog.getByLabel(`Type ${eve.email} to confirm`).fill(eve.email);
    await confirm.click();
    // Like a deletion, it leads back to the list of users.
    await page.getByRole('heading', { name: 'Users', exact: true }).waitFor();
    const erased = await userRow(eve.id);
    assert.deepEqual([erased.email, erased.name, erased.phone], [`erased-${eve.id}@erased.invalid`, 'Erased user', null]);
    assert.notEqual(erased.deleted_at, null);
  });

  it('lets a customer download their own data and delete their own account with their password, at 390px', async () => {
    const { page } = ui;
    const dan = await createUser(ui.testApp.app, { name: 'Dan Example' });
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.setViewportSize({ width: 390, height: 844 });
    // The admin's profile was read in this browser at the same URL and ETag ("1"): it must not be shown to Dan.
    await ui.logIn(dan.email, dan.password);
    await page.getByRole('heading', { name: 'This console is for staff' }).waitFor();
    const account = page.getByRole('region', { name: 'Your data and account' });
    const file = await downloaded(page, account.getByRole('button', { name: 'Download my data' }));
    assert.equal(file.name, `user-${dan.id}.json`);
    assert.equal(file.data.user.email, dan.email);

    await account.getByRole('button', { name: 'Delete my account…' }).click();
    const form = account.getByRole('form', { name: 'Delete my account' });
    await form.getByLabel('Your password').fill('not-my-password');
    await form.getByRole('button', { name: 'Delete my account' }).click();
    await account.getByRole('alert').getByText('The current password is wrong.').waitFor();
    assert.equal((await userRow(dan.id)).deleted_at, null, 'a wrong password deletes nothing');
    assert.deepEqual(await accessibilityViolationsOf(page), [], 'the own-account section');
    assert.ok((await ui.sidewaysOverflow()) <= 0, 'nothing off-screen at 390px');
    await form.getByLabel('Your password').fill(dan.password);
    await form.getByRole('button', { name: 'Delete my account' }).click();
    await page.getByRole('form', { name: 'Log in' }).waitFor();
    assert.notEqual((await userRow(dan.id)).deleted_at, null);
    await page.setViewportSize({ width: 1280, height: 900 });
  });
});
