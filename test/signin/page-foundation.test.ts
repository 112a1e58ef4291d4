import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { IntlMessageFormat } from 'intl-messageformat';
import { renderPage } from '../../src/signin/page-document.js';
import { chooseLocale, PAGE_LOCALES } from '../../src/signin/page-locale.js';
import { catalogueOf, message, MESSAGE_KEYS } from '../../src/signin/page-messages.js';
import { pagePolicy } from '../../src/signin/page-policy.js';

/** The names of the arguments an ICU message takes, nested plural branches included. */
function argumentNames(text: string): string[] {
  const names = new Set<string>();
  const walk = (elements: unknown[]) => {
    for (const element of elements as { value?: unknown; options?: Record<string, { value: unknown[] }> }[]) {
      if (typeof element.value === 'string' && 'type' in element && (element as { type: number }).type !== 0) names.add(element.value);
      for (const option of Object.values(element.options ?? {})) walk(option.value);
    }
  };
  walk(new IntlMessageFormat(text, 'en').getAst());
  return [...names].sort();
}

describe('hosted pages: language, messages, document and policy', () => {
  it('chooses the language from ui_locales, then Accept-Language by weight, then the default', () => {
    assert.equal(chooseLocale('fr de-CH en', 'en', 'en'), 'de', 'the first of ui_locales the pages are written in');
    assert.equal(chooseLocale(undefined, 'fr-FR, en;q=0.5, de;q=0.8', 'en'), 'de', 'the heaviest supported language');
    assert.equal(chooseLocale('', 'de;q=0, en;q=0.1', 'de'), 'en', 'q=0 refuses a language');
    assert.equal(chooseLocale('ja', 'fr, *;q=0.5', 'de'), 'de', 'nothing supported: SIGNIN_DEFAULT_LOCALE');
    assert.equal(chooseLocale(undefined, 'DE-at', 'en'), 'de', 'tags are case-insensitive');
    assert.equal(chooseLocale(undefined, ';;,q=1,de;q=abc', 'en'), 'de', 'a malformed weight counts as 1, never a throw');
    assert.equal(chooseLocale(undefined, 'en, de;q=1.5', 'en'), 'en', 'a weight above 1 is malformed: 1, after the earlier tag');
  });

  it('writes every message in every language, with the same arguments as the English one', () => {
    for (const locale of PAGE_LOCALES) {
      const catalogue = catalogueOf(locale);
      assert.deepEqual(Object.keys(catalogue).sort(), [...MESSAGE_KEYS].sort(), `${locale} has exactly the English keys`);
      for (const key of MESSAGE_KEYS) {
        assert.notEqual(catalogue[key].trim(), '', `${locale} ${key}`);
        assert.deepEqual(argumentNames(catalogue[key]), argumentNames(catalogueOf('en')[key]), `${locale} ${key} takes the English arguments`);
      }
    }
  });

  it('puts values in as the language writes them, plurals included', () => {
    assert.equal(message('en', 'signIn.codeSent', { email: 'a@example.com', minutes: 1 }), 'If a@example.com can sign in here, a code is on its way to it. It is good for 1 minute.');
    assert.match(message('en', 'signIn.codeSent', { email: 'a@example.com', minutes: 10 }), /10 minutes\.$/);
    assert.match(message('de', 'signIn.codeSent', { email: 'a@example.com', minutes: 10 }), /Er gilt 10 Minuten\.$/);
    assert.equal(message('de', 'signIn.title', { brand: 'Laden' }), 'Bei Laden anmelden');
  });

  it('renders a page in its language, with every value escaped', () => {
    const html = renderPage({ locale: 'de', brand: { name: '<script>alert(1)</script>', logoUrl: undefined }, heading: 'Bei "x" anmelden', children: null });
    assert.match(html, /^<!doctype html><html lang="de">/);
    assert.ok(!html.includes('<script>'), 'no value becomes markup');
    assert.match(html, /&lt;script>alert\(1\)&lt;\/script>/);
    assert.match(html, /<meta name="viewport" content="width=device-width, initial-scale=1"\/?>/);
    assert.match(html, /<a class="skip" href="#content">Zum Formular springen<\/a>/);
    const withLogo = renderPage({ locale: 'en', brand: { name: 'Shop', logoUrl: 'https://cdn.example/logo.png' }, heading: 'Sign in', children: null });
    assert.match(withLogo, /<img class="brand" src="https:\/\/cdn.example\/logo.png" alt="Shop"\/?>/);
  });

  it('allows no inline script or style, no framing, and images only from this origin and the logos', () => {
    const policy = pagePolicy({ imageUrls: ['https://cdn.example/logo.png', undefined, 'https://cdn.example/other.png'], formTargets: ['https://shop.example/callback?x=1', 'com.example.shop:/callback'] });
    assert.ok(!policy.includes('unsafe'), policy);
    assert.match(policy, /(^|; )default-src 'none'(;|$)/);
    assert.match(policy, /(^|; )script-src 'self'(;|$)/);
    assert.match(policy, /(^|; )frame-ancestors 'none'(;|$)/);
    assert.match(policy, /(^|; )img-src 'self' https:\/\/cdn\.example(;|$)/, 'each origin once');
    assert.match(policy, /(^|; )form-action 'self' https:\/\/shop\.example com\.example\.shop:(;|$)/);
    assert.match(pagePolicy({}), /(^|; )img-src 'self'(;|$)/);
  });
});
