import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp } from '../helpers/test-app.js';

describe('security headers and CORS', () => {
  it("sends the OWASP REST set on JSON replies, errors included, no X-Powered-By, and no CORS headers unless CORS_ORIGINS is set", async () => {
    const testApp = await buildTestApp();
    try {
      for (const url of ['/healthz', '/api/users/profile', '/api/no-such-thing']) {
        const response = await testApp.app.inject({ method: 'GET', url, headers: { origin: 'https://evil.example' } });
        assert.match(String(response.headers['content-type']), /json/, url);
        assert.equal(response.headers['x-content-type-options'], 'nosniff', url);
        assert.equal(response.headers['strict-transport-security'], 'max-age=31536000; includeSubDomains', url);
        assert.equal(response.headers['x-frame-options'], 'DENY', url);
        assert.equal(response.headers['content-security-policy'], "default-src 'none'; frame-ancestors 'none'", url);
        assert.equal(response.headers['referrer-policy'], 'no-referrer', url);
        assert.equal(response.headers['cross-origin-resource-policy'], 'same-origin', url);
        assert.equal(response.headers['x-permitted-cross-domain-policies'], 'none', url);
        // Helmet's headers for pages a browser renders are for pages only.
        assert.equal(response.headers['x-dns-prefetch-control'], undefined, url);
        assert.equal(response.headers['x-powered-by'], undefined, url);
        assert.equal(response.headers['access-control-allow-origin'], undefined, url);
      }
    } finally {
      await testApp.close();
    }
  });

  it("sends Helmet's page headers, with each page's own policy and the framing it allows, on the API reference and the console", async () => {
    const testApp = await buildTestApp();
    try {
      const consolePage = await testApp.app.inject({ method: 'GET', url: '/admin/' });
      assert.equal(consolePage.statusCode, 200, 'the console is built by npm test before the suite runs');
      const asset = /\/admin\/assets\/[^"]+\.js/.exec(consolePage.body)?.[0];
      assert.ok(asset, 'the console page names its script');
      const pages = [
        { url: '/docs/', framing: 'SAMEORIGIN', policy: /^default-src 'self';.*frame-ancestors 'self'/ },
        { url: '/admin/', framing: 'DENY', policy: /^default-src 'self';.*frame-ancestors 'none'/ },
        { url: asset, framing: 'DENY', policy: /^default-src 'self';.*frame-ancestors 'none'/ },
        { url: '/admin/no-such-file.js', framing: 'DENY', policy: /^default-src 'self';.*frame-ancestors 'none'/ },
      ];
      for (const page of pages) {
        const response = await testApp.app.inject({ method: 'GET', url: page.url });
        assert.match(String(response.headers['content-security-policy']), page.policy, page.url);
        assert.equal(response.headers['x-frame-options'], page.framing, page.url);
        assert.equal(response.headers['referrer-policy'], 'no-referrer', page.url);
        assert.equal(response.headers['cross-origin-opener-policy'], 'same-origin', page.url);
        assert.equal(response.headers['x-content-type-options'], 'nosniff', page.url);
        assert.equal(response.headers['strict-transport-security'], 'max-age=31536000; includeSubDomains', page.url);
      }
    } finally {
      await testApp.close();
    }
  });

  it('allows exactly the configured origins', async () => {
    const testApp = await buildTestApp({ environment: { CORS_ORIGINS: 'https://shop.example, https://admin.shop.example' } });
    try {
      const allowed = await testApp.app.inject({ method: 'GET', url: '/healthz', headers: { origin: 'https://shop.example' } });
      assert.equal(allowed.headers['access-control-allow-origin'], 'https://shop.example');
      const preflight = await testApp.app.inject({
        method: 'OPTIONS',
        url: '/api/users/profile',
        headers: { origin: 'https://admin.shop.example', 'access-control-request-method': 'PUT' },
      });
      assert.equal(preflight.statusCode, 204);
      assert.equal(preflight.headers['access-control-allow-origin'], 'https://admin.shop.example');
      const denied = await testApp.app.inject({ method: 'GET', url: '/healthz', headers: { origin: 'https://evil.example' } });
      assert.equal(denied.headers['access-control-allow-origin'], undefined);
    } finally {
      await testApp.close();
    }
  });
});
