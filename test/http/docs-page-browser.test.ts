import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { noChromium, useConsole } from '../helpers/console-browser.js';

/** Issue 56, friction 9: the API reference at /docs on a phone. */
describe('/docs at 390px, in a real browser', { skip: noChromium }, () => {
  const ui = useConsole();

  /** What reaches past the screen's right edge (boxes, and text running out of its box), to name in a failure. */
  // A string, not a function: the test's compiler would wrap inner functions in a helper the page lacks.
  const offenders = () =>
    ui.page.evaluate(`(() => {
      const edge = document.documentElement.clientWidth + 1;
      const named = (element) => (element ? element.tagName.toLowerCase() + '.' + [...element.classList].join('.') : '?');
      const boxes = [...document.querySelectorAll('body *')].filter((element) => element.getBoundingClientRect().right + Math.max(0, parseFloat(getComputedStyle(element).marginRight) || 0) > edge).map((element) => named(element) + ' ' + Math.round(element.getBoundingClientRect().right) + '+' + getComputedStyle(element).marginRight);
      const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
      const texts = [];
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const range = document.createRange();
        range.selectNodeContents(node);
        if (range.getBoundingClientRect().right > edge) texts.push(named(node.parentElement) + ': ' + node.textContent.slice(0, 40));
      }
      return { width: document.documentElement.scrollWidth, boxes: boxes.slice(0, 8), texts: texts.slice(0, 8) };
    })()`);

  it('lays the page out at the width of the phone, and nothing scrolls sideways, an operation opened included', async () => {
    const { page } = ui;
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${ui.baseUrl}/docs/`);
    await page.locator('.opblock').first().waitFor();
    assert.equal(await page.evaluate(() => window.innerWidth), 390, 'the layout is as wide as the screen, not a desktop page shrunk');
    assert.ok((await ui.sidewaysOverflow()) <= 0, `the page does not scroll sideways: ${JSON.stringify(await offenders())}`);
    await ui.shoot('api-docs-390', 390, false);
    const longest = page.locator('.opblock', { hasText: '/api/reservations/{id}/reallocate' }).first();
    await longest.locator('.opblock-summary').first().click();
    await longest.locator('.opblock-body').waitFor();
    await longest.getByText('Request body').first().waitFor();
    assert.ok((await ui.sidewaysOverflow()) <= 0, `an operation opened does not scroll sideways: ${JSON.stringify(await offenders())}`);
    await longest.scrollIntoViewIfNeeded();
    await ui.shoot('api-docs-operation-390', 390, false);
  });
});
