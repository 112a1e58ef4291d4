import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { accessibilityViolationsOf, noChromium, useConsole } from '../helpers/console-browser.js';

/** The name and text of the file a click on `button` downloads. */
async function downloaded(page: Page, button: Locator): Promise<{ name: string; text: string }> {
  const [download] = await Promise.all([page.waitForEvent('download'), button.click()]);
  return { name: download.suggestedFilename(), text: await readFile((await download.path())!, 'utf8') };
}

/** #33 point 3: catalogue files in and out through the console. */
describe('admin console: imports and exports, in a real browser', { skip: noChromium }, () => {
  const ui = useConsole();
  const skus = () => ui.db().selectFrom('variants').select('sku').where('sku', 'like', 'IMP-%').orderBy('sku').execute();

  async function upload(file: { name: string; text: string }, choices: { onError?: string; dryRun?: boolean } = {}) {
    const form = ui.page.getByRole('form', { name: 'Import a file' });
    await form.getByLabel('File').setInputFiles({ name: file.name, mimeType: 'text/plain', buffer: Buffer.from(file.text) });
    await form.getByLabel('When a row fails').selectOption(choices.onError ?? 'reject_all');
    await form.getByLabel('Dry run (store nothing)').setChecked(choices.dryRun ?? false);
    await form.getByRole('button', { name: 'Start import' }).click();
    return ui.page.getByRole('region', { name: /^Import of/ });
  }

  it('imports a file, follows it to the end, shows its counts and first errors, and downloads the error report; exports the search', async () => {
    const { page } = ui;
    await ui.logIn();
    await page.getByRole('heading', { name: 'Variants' }).waitFor();
    await page.getByRole('link', { name: 'Imports' }).click();
    // #56 frictions 4 and 7: the options in words, each label above its choice, with room between them.
    const form = page.getByRole('form', { name: 'Import a file' });
    assert.deepEqual(await form.getByLabel('Mode').locator('option').allInnerTexts(), ['create new SKUs, update known ones', 'create only (a known SKU fails)']);
    assert.deepEqual(await form.getByLabel('When a row fails').locator('option').allInnerTexts(), ['import nothing', 'skip that row, import the rest']);
    const [mode, modeLabel, onError, dryRun] = await Promise.all([
      form.getByLabel('Mode').boundingBox(),
      form.getByText('Mode', { exact: true }).boundingBox(),
      form.getByLabel('When a row fails').boundingBox(),
      form.getByLabel('Dry run (store nothing)').boundingBox(),
    ]);
    assert.ok(mode && modeLabel && onError && dryRun);
    assert.ok(modeLabel.y + modeLabel.height <= mode.y, 'the label is above its choice');
    assert.ok(mode.x + mode.width + 12 <= onError.x && onError.x + onError.width + 12 <= dryRun.x, 'at least 12px between the options');
    const csv = 'sku,product_id,name,price,stock,attributes.size\nIMP-1,imp,First,100,5,S\nIMP-2,imp,Second,-3,1,M\nIMP-3,imp,"Third, with a comma",300,0,L\n';

    // A dry run under reject_all fails as the real import would, and stores nothing.
    let shown = await upload({ name: 'catalogue.csv', text: csv }, { dryRun: true });
    await shown.getByRole('heading', { name: /: failed \(dry run\)$/ }).waitFor();
    assert.deepEqual(await skus(), []);

    shown = await upload({ name: 'catalogue.csv', text: csv }, { onError: 'skip_failed' });
    await shown.getByRole('heading', { name: /: succeeded$/ }).waitFor();
    await shown.getByText('2 created, 0 updated, 0 unchanged, 1 failed').waitFor();
    assert.deepEqual(await shown.locator('progress').evaluate((bar: HTMLProgressElement) => [bar.value, bar.max]), [3, 3], 'the bar is full: 3 rows of 3');
    await shown.getByText(/^Line 3: /).waitFor();
    const report = await downloaded(page, shown.getByRole('button', { name: 'Download error report' }));
    assert.match(report.name, /\.csv$/);
    assert.match(report.text, /IMP-2/);
    assert.doesNotMatch(report.text, /IMP-1|IMP-3/, 'only the failed row');
    assert.deepEqual((await skus()).map((row) => row.sku), ['IMP-1', 'IMP-3']);
    // The history lists both, newest first.
    const history = page.getByRole('table');
    assert.equal(await history.locator('tbody tr').count(), 2);
    await history.locator('tbody tr').first().getByText('succeeded').waitFor();
    assert.deepEqual(await accessibilityViolationsOf(page), [], 'the imports page');
    await ui.shoot('imports');

    // The export of a search imports back: the same columns.
    await page.getByRole('link', { name: 'Variants' }).click();
    await page.getByRole('search').getByLabel('Product id').fill('imp');
    await page.getByRole('search').getByRole('button', { name: 'Search' }).click();
    const exported = await downloaded(page, page.getByRole('button', { name: 'Export CSV' }));
    const lines = exported.text.trim().split(/\r?\n/);
    assert.equal(lines[0], 'id,sku,product_id,name,price,stock,attributes.size');
    assert.equal(lines.length, 3, 'a header and the two variants of the product');
    assert.ok(lines.some((line) => line.includes('"Third, with a comma"')));
    const jsonLines = await downloaded(page, page.getByRole('button', { name: 'Export JSON lines' }));
    // Oldest first; the two came in one import, in one transaction, so their order between them is the ids'.
    assert.deepEqual(jsonLines.text.trim().split('\n').map((line) => JSON.parse(line).sku).sort(), ['IMP-1', 'IMP-3']);
  });

  it('cancels an import that has not finished, at 390px', async () => {
    const { page } = ui;
    // No instance picks imports up from here on, so this one stays pending until cancelled.
    await ui.testApp.jobs.stop();
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${ui.baseUrl}/admin/#/imports`);
    const shown = await upload({ name: 'more.jsonl', text: '{"sku":"IMP-9","product_id":"imp","name":"Ninth","price":900}\n' });
    await shown.getByRole('heading', { name: /: pending$/ }).waitFor();
    assert.ok((await ui.sidewaysOverflow()) <= 0, 'nothing off-screen at 390px');
    await ui.shoot('imports-390', 390);
    assert.deepEqual(await accessibilityViolationsOf(page), [], 'a pending import at 390px');
    await shown.getByRole('button', { name: 'Cancel import' }).click();
    await shown.getByRole('heading', { name: /: cancelled$/ }).waitFor();
    assert.equal(await shown.getByRole('button', { name: 'Cancel import' }).count(), 0);
    const row = await ui.db().selectFrom('variant_imports').select('status').orderBy('created_at', 'desc').executeTakeFirstOrThrow();
    assert.equal(row.status, 'cancelled');
    assert.deepEqual((await skus()).map((variant) => variant.sku), ['IMP-1', 'IMP-3']);
    await page.setViewportSize({ width: 1280, height: 900 });
  });
});
