import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import { BrowserCookies } from '../../src/http/browser-cookies.js';
import { CsrfTokens } from '../../src/http/csrf-tokens.js';

/** A page and its form post, as a hosted page uses the tokens. */
async function pageApp(publicUrl: string) {
  const app = Fastify();
  const tokens = new CsrfTokens(new BrowserCookies(publicUrl));
  app.get('/page', (request, reply) => ({ token: tokens.tokenFor(request, reply) }));
  app.post<{ Body: { csrf_token?: string } }>('/page', (request) => ({ genuine: tokens.postIsGenuine(request, request.body?.csrf_token) }));
  await app.ready();
  return app;
}

describe('CSRF tokens of the hosted pages', () => {
  it('gives a browser a token in a __Host- cookie over https, and keeps it on the next page', async () => {
    const app = await pageApp('https://accounts.shop.example');
    const first = await app.inject({ method: 'GET', url: '/page' });
    const cookie = String(first.headers['set-cookie']);
    const token = first.json().token as string;
    assert.match(token, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(cookie, `__Host-shop_csrf=${token}; Path=/; Max-Age=31536000; HttpOnly; SameSite=Lax; Secure`);
    const again = await app.inject({ method: 'GET', url: '/page', headers: { cookie: `other=1; __Host-shop_csrf=${token}` } });
    assert.equal(again.json().token, token);
    assert.equal(again.headers['set-cookie'], undefined, 'no new cookie for a browser that has one');
    await app.close();
  });

  it('accepts a post only with the token of the browser that sends it, and never one a browser says is cross-site', async () => {
    const app = await pageApp('https://accounts.shop.example');
    const mine = (await app.inject({ method: 'GET', url: '/page' })).json().token as string;
    const theirs = (await app.inject({ method: 'GET', url: '/page' })).json().token as string;
    const post = (cookie: string | undefined, body: Record<string, string>, headers: Record<string, string> = {}) =>
      app.inject({ method: 'POST', url: '/page', headers: { ...(cookie ? { cookie } : {}), ...headers }, payload: body }).then((reply) => reply.json().genuine as boolean);
    assert.equal(await post(`__Host-shop_csrf=${mine}`, { csrf_token: mine }), true);
    assert.equal(await post(`__Host-shop_csrf=${mine}`, { csrf_token: mine }, { 'sec-fetch-site': 'same-origin' }), true);
    assert.equal(await post(`__Host-shop_csrf=${mine}`, { csrf_token: theirs }), false, "another browser's token");
    assert.equal(await post(`__Host-shop_csrf=${mine}`, {}), false, 'no token');
    assert.equal(await post(undefined, { csrf_token: mine }), false, 'no cookie');
    assert.equal(await post(`shop_csrf=${mine}`, { csrf_token: mine }), false, 'a cookie without the prefix, which any subdomain could set, counts for nothing over https');
    assert.equal(await post(`__Host-shop_csrf=${mine}`, { csrf_token: mine }, { 'sec-fetch-site': 'cross-site' }), false);
    assert.equal(await post(`__Host-shop_csrf=short`, { csrf_token: 'short' }), false, 'a token this service did not make');
    await app.close();
  });

  it('drops Secure and the prefix only for plain http on a loopback host', async () => {
    const app = await pageApp('http://127.0.0.1:3000');
    const reply = await app.inject({ method: 'GET', url: '/page' });
    assert.equal(String(reply.headers['set-cookie']), `shop_csrf=${reply.json().token}; Path=/; Max-Age=31536000; HttpOnly; SameSite=Lax`);
    await app.close();
    const elsewhere = await pageApp('http://shop.internal:8080');
    const kept = await elsewhere.inject({ method: 'GET', url: '/page' });
    assert.match(String(kept.headers['set-cookie']), /^__Host-shop_csrf=[A-Za-z0-9_-]{43}; .*; Secure$/, 'plain http elsewhere keeps Secure and the prefix (a browser then sets no cookie, and no post counts)');
    await elsewhere.close();
  });
});
