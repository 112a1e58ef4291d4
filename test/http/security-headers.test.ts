import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTestApp } from '../helpers/test-app.js';

describe('security headers and CORS', () => {
  it('sends security headers, no X-Powered-By, and no CORS headers unless CORS_ORIGINS is set', async () => {
    const testApp = await buildTestApp();
    try {
      const response = await testApp.app.inject({ method: 'GET', url: '/healthz', headers: { origin: 'https://evil.example' } });
      assert.equal(response.headers['x-content-type-options'], 'nosniff');
      assert.ok(response.headers['strict-transport-security']);
      assert.equal(response.headers['x-frame-options'], 'SAMEORIGIN');
      assert.equal(response.headers['x-powered-by'], undefined);
      assert.equal(response.headers['access-control-allow-origin'], undefined);
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
