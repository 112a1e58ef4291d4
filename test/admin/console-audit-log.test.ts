import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { accessibilityViolationsOf, noChromium, useConsole } from '../helpers/console-browser.js';
import { loginAdmin } from '../helpers/test-app.js';

/** #56 friction 3: the audit log in words (names, not ids or JSON), inside the page at 1280px and at 390px. */
describe('admin console: the audit log, readable at any width, in a real browser', { skip: noChromium }, () => {
  const ui = useConsole();
  let reservationId: string;

  before(async () => {
    const { app, jobs } = ui.testApp;
    const admin = await loginAdmin(app);
    const call = async (method: 'POST' | 'PATCH', url: string, payload: object | string, headers: Record<string, string> = {}) => {
      const response = await app.inject({ method, url, headers: { ...admin.auth, ...headers }, payload });
      assert.ok(response.statusCode < 300, response.body);
      return response;
    };
    const variant = (await call('POST', '/api/variants', { product_id: 'audit', sku: 'AUDIT-SHIRT-M', name: 'Audit shirt', price: 1999, stock: 9, attributes: { size: 'M' } })).json();
    await call('PATCH', `/api/variants/${variant.id}`, { attributes: { size: 'L', colour: 'sea green' } }, { 'if-match': `"${variant.version}"` });
    reservationId = (await call('POST', '/api/reservations', { lines: [{ variant_id: variant.id, quantity: 2 }], reference: 'cart-5601' })).json().id;
    await call('POST', '/api/clients', { name: 'Warehouse sync', scopes: ['variants:read', 'inventory:write'] });
    await call('POST', '/api/webhooks', { url: 'http://127.0.0.1:9/a-rather-long-path/for-the-search-index', events: ['variant.created', 'variant.updated', 'reservation.created'] });
    const upload = await call('POST', '/api/variants/imports?on_error=skip_failed', 'sku,product_id,name,price,stock\nAUDIT-IMPORTED-1,audit,Imported,500,1\n', { 'content-type': 'text/csv' });
    assert.equal(upload.statusCode, 202);
    await jobs.runNow('run-imports');
  });

  /** The row of an event of `type` (by its "What" cell: a webhook's row lists types too). */
  const eventRow = (type: string) => ui.page.locator('table.events > tbody > tr').filter({ has: ui.page.locator('td[data-label="What"]').getByText(type, { exact: true }) });

  /** Each event's details and subject as the page shows them, outside the raw JSON. */
  const shownText = () => ui.page.locator('table.events > tbody').evaluate((body) => {
    const copy = body.cloneNode(true) as HTMLElement;
    copy.querySelectorAll('details').forEach((details) => details.remove());
    return copy.innerText;
  });

  it('names reservations, webhooks, imports and variants, and shows lists, lines and attributes in words', async () => {
    const { page } = ui;
    await ui.logIn();
    await page.getByRole('heading', { name: 'Variants' }).waitFor();
    await page.getByRole('link', { name: 'Audit log' }).click();
    const reserved = eventRow('reservation.created');
    await reserved.getByRole('link', { name: 'reservation cart-5601' }).waitFor();
    // The reservation's lines: units and the variant's SKU, not `[{"quantity":2,…}]`.
    await reserved.locator('li').filter({ hasText: /^lines: 2 × AUDIT-SHIRT-M$/ }).waitFor();
    await reserved.getByRole('link', { name: 'AUDIT-SHIRT-M' }).waitFor();
    const client = eventRow('client.created');
    await client.locator('li').filter({ hasText: /^scopes: variants:read, inventory:write$/ }).waitFor();
    await eventRow('webhook.created').getByRole('link', { name: /^webhook to http:\/\/127\.0\.0\.1:9\// }).waitFor();
    const finished = eventRow('import.finished');
    await finished.getByRole('link', { name: /^CSV import of / }).waitFor();
    // The imported variant's creation names its import by when it started, not by a UUID's first 8 characters.
    await eventRow('variant.created').filter({ hasText: 'AUDIT-IMPORTED-1' }).getByRole('link', { name: /^CSV import of / }).waitFor();
    const updated = eventRow('variant.updated');
    assert.deepEqual(await updated.locator('table.diff tbody tr').first().locator('th, td').allTextContents(), ['attributes', 'size: M', 'size: L, colour: sea green']);

    const text = await shownText();
    assert.doesNotMatch(text, /[{}[\]"]/, 'no JSON outside "Raw data"');
    assert.doesNotMatch(text, /\b(reservation|webhook|import|variant|user) [0-9a-f]{8}\b/, 'no record named by an id prefix');
    assert.ok(!text.includes(reservationId.slice(0, 8)), "the reservation's id is not shown");
  });

  it('fits its table inside the page at 1280px, and labels before and after on the cards at 390px', async () => {
    const { page } = ui;
    const table = page.locator('table.events');
    const fits = () => table.evaluate((element) => element.scrollWidth <= (element.parentElement as HTMLElement).clientWidth && element.getBoundingClientRect().right <= document.documentElement.clientWidth);
    assert.ok(await fits(), 'the table is no wider than its box at 1280px');
    assert.ok((await ui.sidewaysOverflow()) <= 0, 'nothing scrolls sideways at 1280px');
    await ui.shoot('audit-log');

    await ui.shoot('audit-log-390', 390);
    assert.ok((await ui.sidewaysOverflow()) <= 0, 'nothing scrolls sideways at 390px');
    const change = eventRow('variant.updated').locator('table.diff tbody tr').first();
    const labels = await change.locator('td').evaluateAll((cells) => cells.map((cell) => getComputedStyle(cell, '::before').content));
    assert.deepEqual(labels, ['"Before"', '"After"'], 'each value says whether it is before or after');
    assert.deepEqual(await accessibilityViolationsOf(page), [], 'the audit log at 390px');
    await page.setViewportSize({ width: 1280, height: 900 });
  });
});
