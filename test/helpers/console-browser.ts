import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { mkdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { freePort } from './service-process.js';
import { SmtpCatcher } from './smtp-catcher.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, buildTestApp, type TestApp } from './test-app.js';

const AXE_SCRIPT = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const noChromium = !existsSync(CHROMIUM) && `no Chromium at ${CHROMIUM}`;
// `npm run screenshots` refreshes the README's pictures; ordinary runs keep theirs out of the tree.
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS ? 'docs/screenshots' : path.join(tmpdir(), 'shop-console-screenshots');

/** Debian's Chromium as every browser test runs it: no sandbox (a container), nothing fetched in the background. */
export const launchChromium = (): Promise<Browser> =>
  chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });

/** A new page at 390 px (the width the hosted pages are first made for) whose Content Security Policy reports land in `reports`. */
export async function pageReportingPolicy(browser: Browser, reports: string[]): Promise<Page> {
  const page = await (await browser.newContext({ viewport: { width: 390, height: 844 } })).newPage();
  page.setDefaultTimeout(10_000);
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) reports.push(message.text());
  });
  return page;
}

/** An app the hosted pages send the browser back to: another origin, answering any path; `callback` is its redirect URI. */
export async function startLandingApp(): Promise<{ callback: string; close(): Promise<void> }> {
  const server = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/plain' }).end('signed in'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    callback: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Where a test's picture named `name` goes: the README's folder under `npm run screenshots`, else a temporary one. */
export async function screenshotPath(name: string): Promise<string> {
  await mkdir(SCREENSHOTS, { recursive: true });
  return `${SCREENSHOTS}/${name}.png`;
}

/**
 * The built console served by a real app (with a real SMTP server for its emails, and the
 * links in them pointing at it) in Debian's Chromium: one browser page for a describe block.
 */
export function useConsole(options: { host?: 'localhost' } = {}) {
  const fixture = {} as { testApp: TestApp; browser: Browser; page: Page; baseUrl: string; smtp: SmtpCatcher };
  before(async () => {
    fixture.smtp = new SmtpCatcher();
    const smtpUrl = await fixture.smtp.start();
    const port = Number(await freePort());
    // Passkeys need a domain for their relying party id (an IP address is refused): those tests browse to localhost.
    fixture.baseUrl = `http://${options.host ?? '127.0.0.1'}:${port}`;
    fixture.testApp = await buildTestApp({ environment: { SMTP_URL: smtpUrl, PUBLIC_URL: fixture.baseUrl, WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
    await fixture.testApp.app.listen({ port, host: '127.0.0.1' });
    fixture.browser = await launchChromium();
    const context = await fixture.browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: fixture.baseUrl });
    fixture.page = await context.newPage();
    fixture.page.setDefaultTimeout(10_000);
    await mkdir(SCREENSHOTS, { recursive: true });
  });
  after(async () => {
    await fixture.browser?.close();
    await fixture.testApp?.close();
    await fixture.smtp?.stop();
  });

  return Object.assign(fixture, {
    db: () => fixture.testApp.db,
    /** A picture of the page at `width`, whole or (`fullPage: false`) as much as a screen shows. */
    async shoot(name: string, width = 1280, fullPage = true) {
      await fixture.page.setViewportSize({ width, height: width > 500 ? 900 : 844 });
      await fixture.page.screenshot({ path: `${SCREENSHOTS}/${name}.png`, fullPage });
    },
    async logIn(email = ADMIN_EMAIL, password = ADMIN_PASSWORD) {
      await fixture.page.goto(`${fixture.baseUrl}/admin/`);
      const form = fixture.page.getByRole('form', { name: 'Log in' });
      await form.getByLabel('Email').fill(email);
      await form.getByLabel('Password').fill(password);
      await form.getByRole('button', { name: 'Log in' }).click();
    },
    /** The WCAG 2.1 A and AA violations of the fixture's page (accessibilityViolationsOf). */
    accessibilityViolations: () => accessibilityViolationsOf(fixture.page),
    /** How far the page scrolls sideways: more than 0 hides something off-screen. */
    sidewaysOverflow: () => fixture.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth),
    /** The link of the newest email to `address` whose link contains `linkPath`, among those after the first `skip`. */
    async linkFor(address: string, linkPath: string, skip = 0): Promise<string> {
      for (let waited = 0; waited < 15_000; waited += 50) {
        const mail = fixture.smtp.mails.slice(skip).reverse().find((candidate) => candidate.to.includes(address) && candidate.text.includes(linkPath));
        const link = mail?.text.match(/https?:\/\/\S+?token=[A-Za-z0-9_-]{43}/)?.[0];
        if (link) return link;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error(`no mail to ${address} with ${linkPath}`);
    },
  });
}

/**
 * The WCAG 2.1 A and AA rules axe-core finds broken on `page` as it is now (labels, names,
 * contrast, landmarks), as "rule: element" lines; none is the goal.
 */
export async function accessibilityViolationsOf(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, so the console keeps running under the service's CSP.
  await page.evaluate(await readFile(AXE_SCRIPT, 'utf8'));
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: { id: string; nodes: { target: string[] }[] }[] }> } }).axe;
    const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return result.violations.flatMap((violation) => violation.nodes.map((node) => `${violation.id}: ${node.target.join(' ')}`));
  });
}
