import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useConsole, noChromium } from '../helpers/console-browser.js';
import { createUser, loginAdmin, newVariantBody } from '../helpers/test-app.js';

/** Issue 56: API.md section 21's stock locations, from the console. */
describe('admin console: stock locations, transfers and reallocation, in a real browser', { skip: noChromium }, () => {
  const ui = useConsole();
  const locationByCode = (code: string) => ui.db().selectFrom('locations').selectAll().where('code', '=', code).executeTakeFirstOrThrow();
  /** The variant's stock at each location, by code, as the database holds it (no row is zero). */
  async function stockByCode(variantId: string): Promise<Record<string, number>> {
    const rows = await ui.db().selectFrom('stock_levels').innerJoin('locations', 'locations.id', 'stock_levels.location_id').select(['locations.code', 'stock_levels.stock']).where('variant_id', '=', variantId).execute();
    return Object.fromEntries(rows.filter((row) => row.stock > 0).map((row) => [row.code, row.stock]));
  }
  /** Nothing for axe to find, nothing off-screen at 390px, and the two pictures. */
  async function checkScreen(name: string, prepare: () => Promise<void> = async () => {}, fullPage = true) {
    assert.deepEqual(await ui.accessibilityViolations(), [], `${name} at 1280px`);
    await prepare();
    await ui.shoot(name, 1280);
    await ui.page.setViewportSize({ width: 390, height: 844 });
    await prepare();
    assert.ok((await ui.sidewaysOverflow()) <= 0, `${name} does not scroll sideways at 390px`);
    assert.deepEqual(await ui.accessibilityViolations(), [], `${name} at 390px`);
    await ui.shoot(`${name}-390`, 390, fullPage);
    await ui.page.setViewportSize({ width: 1280, height: 900 });
  }
  let variantId = '';

  it('lists the locations by priority; an admin creates one (a bad code shown beside its field), edits its priority, makes another the default and deactivates one', async () => {
    const { page } = ui;
    await ui.logIn();
    await page.getByRole('heading', { name: 'Variants' }).waitFor();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Locations' }).click();
    const table = page.locator('table.locations');
    await table.getByRole('cell', { name: 'default', exact: true }).first().waitFor();

    const create = page.getByRole('form', { name: 'New location' });
    await create.getByLabel('Code').fill('berlin 1!');
    await create.getByLabel('Name').fill('Berlin warehouse');
    await create.getByLabel(/^Priority/).fill('10');
    await create.getByRole('button', { name: 'Create location' }).click();
    await create.locator('.field', { has: page.getByLabel('Code') }).getByRole('alert').waitFor();
    await create.getByLabel('Code').fill('berlin-1');
    await create.getByRole('button', { name: 'Create location' }).click();
    await page.getByRole('status').getByText('Created berlin-1.').waitFor();
    await create.getByLabel('Code').fill('hamburg');
    await create.getByLabel('Name').fill('Hamburg store');
    await create.getByLabel(/^Priority/).fill('50');
    await create.getByRole('button', { name: 'Create location' }).click();
    await page.getByRole('status').getByText('Created hamburg.').waitFor();
    assert.deepEqual(
      [await locationByCode('berlin-1'), await locationByCode('hamburg')].map((row) => [row.name, row.priority, row.status, row.is_default]),
      [
        ['Berlin warehouse', 10, 'active', false],
        ['Hamburg store', 50, 'active', false],
      ],
    );
    // The list is in the API's order: lowest priority first.
    await page.waitForFunction(() => document.querySelectorAll('table.locations tbody tr').length === 3);
    assert.deepEqual(await table.locator('tbody tr td:first-child').allInnerTexts(), ['berlin-1', 'hamburg', 'default']);

    await page.getByRole('button', { name: 'Edit hamburg' }).click();
    const edit = page.getByRole('form', { name: 'Edit location hamburg' });
    await edit.getByLabel(/^Priority/).fill('5');
    await edit.getByRole('button', { name: 'Save location' }).click();
    await page.getByRole('status').getByText('Saved hamburg.').waitFor();
    assert.equal((await locationByCode('hamburg')).priority, 5);
    await page.waitForFunction(() => document.querySelector('table.locations tbody tr td')?.textContent === 'hamburg');

    await page.getByRole('button', { name: 'Make default: hamburg…' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Make default' }).click();
    await page.getByRole('status').getByText('hamburg is now the default location.').waitFor();
    assert.deepEqual([(await locationByCode('hamburg')).is_default, (await locationByCode('default')).is_default], [true, false]);

    await page.getByRole('button', { name: 'Deactivate default…' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Deactivate' }).click();
    await page.getByRole('status').getByText('default is inactive.').waitFor();
    assert.equal((await locationByCode('default')).status, 'inactive');
    await page.getByRole('row', { name: /Default/ }).getByText('inactive').waitFor();
    await checkScreen('locations');
  });

  it("shows a variant's stock at every location in its panel, sets a count at a chosen location and adds units at the default", async () => {
    const { page } = ui;
    const admin = await loginAdmin(ui.testApp.app);
    const created = await ui.testApp.app.inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: { ...newVariantBody(10, 'loc'), sku: 'LOC-SHIRT-M' } });
    assert.equal(created.statusCode, 201);
    variantId = created.json().id;
    assert.deepEqual(await stockByCode(variantId), { hamburg: 10 }, 'a new variant\'s stock lands at the default');

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Variants' }).click();
    await page.getByRole('button', { name: 'Open LOC-SHIRT-M' }).click();
    const panel = page.getByRole('complementary');
    const levels = panel.locator('table.stock-levels');
    await levels.getByRole('row', { name: /hamburg/ }).getByRole('cell', { name: '10' }).first().waitFor();
    assert.deepEqual(await levels.locator('tbody tr td:first-child').allInnerTexts(), ['hamburg', 'berlin-1', 'default (inactive)']);

    const change = panel.getByRole('form', { name: 'Change stock' });
    await change.getByLabel('Location', { exact: true }).selectOption({ label: 'berlin-1' });
    await change.getByLabel('Set the count').check();
    await change.getByLabel('Units counted').fill('4');
    await change.getByLabel('Reason').fill('Shelf count');
    await change.getByRole('button', { name: 'Change stock' }).click();
    await panel.getByText('Stock at berlin-1 set to 4: now 14 in all (14 available).').waitFor();
    assert.deepEqual(await stockByCode(variantId), { hamburg: 10, 'berlin-1': 4 });
    await levels.getByRole('row', { name: /berlin-1/ }).getByRole('cell', { name: '4' }).first().waitFor();
    await panel.getByRole('row', { name: /Shelf count/ }).getByRole('cell', { name: 'berlin-1' }).waitFor();

    await change.getByLabel('Location', { exact: true }).selectOption({ label: 'The default location' });
    await change.getByLabel('Add or remove units').check();
    await change.getByLabel(/^Units to add/).fill('2');
    await change.getByLabel('Reason').fill('Returned by a customer');
    await change.getByRole('button', { name: 'Change stock' }).click();
    await panel.getByText('Stock +2: now 16 in all (16 available).').waitFor();
    assert.deepEqual(await stockByCode(variantId), { hamburg: 12, 'berlin-1': 4 });
    await levels.getByRole('row', { name: /hamburg/ }).getByRole('cell', { name: '12' }).first().waitFor();
    // The pictures show the panel's stock section from its top, not where the form left it scrolled;
    // at 390px the panel is a sheet fixed over the screen, so the picture is the screen.
    const toStock = () => ui.page.evaluate(() => document.getElementById('stock-title')?.scrollIntoView({ block: 'start' }));
    await checkScreen('variant-stock', toStock, false);
  });

  it('transfers units between locations by SKU, refuses an unknown SKU and more than the source holds, and offers no inactive destination', async () => {
    const { page } = ui;
    await page.getByRole('button', { name: 'Close' }).click();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Transfers' }).click();
    const form = page.getByRole('form', { name: 'Transfer stock' });
    await form.getByLabel('From', { exact: true }).locator('option', { hasText: 'default' }).waitFor({ state: 'attached' });
    assert.deepEqual(await form.getByLabel('To', { exact: true }).locator('option').allInnerTexts(), ['Choose a location', 'hamburg: Hamburg store', 'berlin-1: Berlin warehouse']);
    await form.getByLabel('From', { exact: true }).selectOption({ label: 'hamburg: Hamburg store' });
    await form.getByLabel('To', { exact: true }).selectOption({ label: 'berlin-1: Berlin warehouse' });
    await form.getByLabel('SKU of line 1').fill('NO-SUCH-SKU');
    await form.getByLabel('Units of line 1').fill('3');
    await form.getByLabel('Reason').fill('Restock Berlin');
    await form.getByLabel(/^Reference/).fill('TR-1');
    await form.getByRole('button', { name: 'Transfer stock' }).click();
    await form.getByRole('alert').getByText('No variant has the SKU "NO-SUCH-SKU".').waitFor();

    await form.getByLabel('SKU of line 1').fill('LOC-SHIRT-M');
    await form.getByLabel('Units of line 1').fill('13');
    await form.getByRole('button', { name: 'Transfer stock' }).click();
    await form.getByRole('alert').getByText('Some lines would take the source below what is reserved there; nothing moved.').waitFor();
    assert.deepEqual(await stockByCode(variantId), { hamburg: 12, 'berlin-1': 4 }, 'a refused transfer moves nothing');

    await form.getByLabel('Units of line 1').fill('3');
    await form.getByRole('button', { name: 'Transfer stock' }).click();
    await page.getByRole('status').getByText('Moved 1 line from hamburg to berlin-1.').waitFor();
    assert.deepEqual(await stockByCode(variantId), { hamburg: 9, 'berlin-1': 7 });
    const moved = page.getByRole('region', { name: 'Moved' });
    await moved.getByRole('row', { name: /LOC-SHIRT-M/ }).waitFor();
    assert.deepEqual(await moved.locator('tbody td').allInnerTexts(), ['LOC-SHIRT-M', '3', '9', '7']);
    const movements = await ui.db().selectFrom('stock_movements').select(['delta', 'reason', 'reference']).where('variant_id', '=', variantId).where('reference', '=', 'TR-1').orderBy('delta').execute();
    assert.deepEqual(movements, [
      { delta: -3, reason: 'Restock Berlin', reference: 'TR-1' },
      { delta: 3, reason: 'Restock Berlin', reference: 'TR-1' },
    ]);
    await checkScreen('stock-transfer');
  });

  it("lists reservations, opens one to show where each line holds its units, and reallocates a line (a wrong sum refused)", async () => {
    const { page } = ui;
    const admin = await loginAdmin(ui.testApp.app);
    const reserved = await ui.testApp.app.inject({ method: 'POST', url: '/api/reservations', headers: admin.auth, payload: { lines: [{ variant_id: variantId, quantity: 5 }], reference: 'cart-5150' } });
    assert.equal(reserved.statusCode, 201);
    const reservationId = reserved.json().id;

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Reservations' }).click();
    await page.getByRole('link', { name: 'Open cart-5150' }).click();
    const detail = page.getByRole('region', { name: 'Reservation cart-5150' });
    // The whole line from the first active location by priority that has it: hamburg (5) has 9.
    const line = detail.getByRole('region', { name: /^Line 1: 5 × / });
    await line.getByRole('link', { name: 'LOC-SHIRT-M' }).waitFor();
    assert.deepEqual(await line.locator('table tbody td').allInnerTexts(), ['hamburg', '5']);

    const form = line.getByRole('form', { name: 'Reallocate line 1' });
    await form.getByLabel('hamburg').fill('2');
    await form.getByLabel('berlin-1').fill('2');
    await form.getByText('4 of 5 units placed.').waitFor();
    await form.getByRole('button', { name: 'Reallocate line 1' }).click();
    await form.getByRole('alert').getByText('Some of what was typed cannot be used:').waitFor();
    await form.getByLabel('berlin-1').fill('3');
    await form.getByRole('button', { name: 'Reallocate line 1' }).click();
    await detail.getByRole('status').getByText('Line 1 now holds its units at hamburg: 2, berlin-1: 3.').waitFor();
    const allocations = await ui.db()
      .selectFrom('reservation_allocations')
      .innerJoin('locations', 'locations.id', 'reservation_allocations.location_id')
      .select(['locations.code', 'reservation_allocations.quantity'])
      .where('reservation_id', '=', reservationId)
      .orderBy('locations.code')
      .execute();
    assert.deepEqual(allocations, [
      { code: 'berlin-1', quantity: 3 },
      { code: 'hamburg', quantity: 2 },
    ]);
    await line.getByRole('row', { name: /berlin-1/ }).waitFor();
    await checkScreen('reservation');

    // The variant's panel links each reservation holding it to this page.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Variants' }).click();
    await page.getByRole('button', { name: 'Open LOC-SHIRT-M' }).click();
    await page.getByRole('complementary').getByRole('link', { name: 'cart-5150' }).click();
    await page.getByRole('region', { name: 'Reservation cart-5150' }).getByRole('form', { name: 'Reallocate line 1' }).waitFor();
  });

  it('deletes an empty location after confirming, and says why one that holds stock stays', async () => {
    const { page } = ui;
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Locations' }).click();
    await page.getByRole('button', { name: 'Delete berlin-1…' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Delete location' }).click();
    await dialog.getByRole('alert').getByText(/^Location berlin-1 holds stock or reserved units/).waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    assert.equal((await locationByCode('berlin-1')).code, 'berlin-1', 'a location holding stock stays');

    const create = page.getByRole('form', { name: 'New location' });
    await create.getByLabel('Code').fill('spare');
    await create.getByLabel('Name').fill('Spare room');
    await create.getByRole('button', { name: 'Create location' }).click();
    await page.getByRole('status').getByText('Created spare.').waitFor();
    await page.getByRole('button', { name: 'Delete spare…' }).click();
    await dialog.getByRole('button', { name: 'Delete location' }).click();
    await page.getByRole('status').getByText('Deleted spare.').waitFor();
    assert.equal((await ui.db().selectFrom('locations').select('id').where('code', '=', 'spare').execute()).length, 0);
  });

  it('shows a manager the locations without the forms that only admins may use', async () => {
    const { page } = ui;
    const manager = await createUser(ui.testApp.app, { role: 'manager' });
    await page.getByRole('button', { name: 'Log out' }).click();
    await ui.logIn(manager.email, manager.password);
    await page.getByRole('heading', { name: 'Variants' }).waitFor();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Locations' }).click();
    await page.getByText('Only admins change locations.').waitFor();
    await page.locator('table.locations').getByRole('cell', { name: 'berlin-1' }).waitFor();
    assert.equal(await page.getByRole('form', { name: 'New location' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: /^Edit / }).count(), 0);
  });
});
