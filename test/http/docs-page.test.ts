import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { chromium } from 'playwright-core';
import { buildTestApp } from '../helpers/test-app.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

describe('the /docs reference page in a real browser', { skip: !existsSync(CHROMIUM) && `no Chromium at ${CHROMIUM}` }, () => {
  it('renders every operation with no console error (its CSP allows what Swagger UI does)', async () => {
    const testApp = await buildTestApp();
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    });
    try {
      await testApp.app.listen({ port: 0, host: '127.0.0.1' });
      const port = (testApp.app.server.address() as AddressInfo).port;
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error' || message.type() === 'warning') problems.push(message.text());
      });
      page.on('pageerror', (error) => problems.push(error.message));
      await page.goto(`http://127.0.0.1:${port}/docs`);
      await page.getByText('/api/variants/batch').first().waitFor();
      assert.ok((await page.locator('.opblock').count()) >= 25, 'every operation is listed');
      assert.deepEqual(problems, []);
    } finally {
      await browser.close();
      await testApp.close();
    }
  });
});
