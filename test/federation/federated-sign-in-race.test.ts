import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, loginAdmin, onPostgres, type TestApp } from '../helpers/test-app.js';
import { PageBrowser, pkcePair } from '../helpers/page-browser.js';
import { signInAtUpstream } from '../helpers/upstream-browser.js';
import { startUpstreamProvider, type UpstreamProvider } from '../helpers/upstream-provider.js';

const PUBLIC_URL = 'http://127.0.0.1:3000';
const CALLBACK = 'https://shop.example.com/callback';
const SECRET = 'upstream-client-secret-of-the-shop';

/**
 * API.md section 20: "Two first sign-ins of one new identity at once make one account." Two
 * instances over one PostgreSQL database each get the callback of their own attempt for the same
 * new `sub`, at the same moment: the advisory lock on (provider, sub) and the unique identity
 * make one account, and both sign in to it.
 */
describe('two first sign-ins of one new identity at once (PostgreSQL)', { skip: !onPostgres && 'needs PostgreSQL' }, () => {
  let first: TestApp;
  let second: TestApp;
  let upstream: UpstreamProvider;
  let appId: string;
  let providerId: string;

  before(async () => {
    upstream = await startUpstreamProvider({
      client: { client_id: 'shop', client_secret: SECRET, redirect_uris: [`${PUBLIC_URL}/oauth/callback/any`] },
      redirectUriPrefix: `${PUBLIC_URL}/oauth/callback/`,
    });
    first = await buildTestApp({ environment: { PUBLIC_URL } });
    second = await buildTestApp({ environment: { PUBLIC_URL }, databaseUrl: first.databaseUrl! });
    const admin = await loginAdmin(first.app);
    const app = await first.app.inject({ method: 'POST', url: '/api/clients', headers: admin.auth, payload: { name: 'Storefront', type: 'public', first_party: true, redirect_uris: [CALLBACK], scopes: ['openid', 'email'] } });
    assert.equal(app.statusCode, 201, app.body);
    appId = app.json().id;
    const provider = await first.app.inject({
      method: 'POST',
      url: '/api/identity-providers',
      headers: admin.auth,
      payload: { name: 'Upstream', issuer: upstream.issuer, client_id: 'shop', client_secret: SECRET, button_label: 'Sign in with Upstream' },
    });
    assert.equal(provider.statusCode, 201, provider.body);
    providerId = provider.json().id;
  });
  after(async () => {
    await second?.app.close();
    await first?.close();
    await upstream?.stop();
  });

  /** A browser on `instance` that has been to the upstream: the callback path it is about to follow. */
  async function readyCallback(instance: TestApp, sub: string): Promise<{ browser: PageBrowser; path: string }> {
    const browser = new PageBrowser(instance.app);
    const query = new URLSearchParams({ response_type: 'code', client_id: appId, redirect_uri: CALLBACK, scope: 'openid email', code_challenge: pkcePair().challenge, code_challenge_method: 'S256' });
    const page = await browser.get(`/oauth/authorize?${query}`);
    const started = await browser.submit(page, 'provider', { provider_id: providerId });
    assert.equal(started.statusCode, 303, started.body);
    const callbackUrl = await signInAtUpstream(started.headers.location as string, sub);
    return { browser, path: `${callbackUrl.pathname}${callbackUrl.search}` };
  }

  it('makes one account and links the identity once; both sign in to it', async () => {
    for (let round = 0; round < 3; round += 1) {
      const account = { sub: `sub-${randomUUID()}`, email: `race-${randomUUID().slice(0, 8)}@example.com`, email_verified: true };
      upstream.accounts.set(account.sub, account);
      const one = await readyCallback(first, account.sub);
      const other = await readyCallback(second, account.sub);
      const replies = await Promise.all([one.browser.get(one.path), other.browser.get(other.path)]);
      for (const reply of replies) assert.equal(reply.statusCode, 303, reply.body);
      const users = await first.db.selectFrom('users').select('id').where('email', '=', account.email).execute();
      assert.equal(users.length, 1);
      const identities = await first.db.selectFrom('user_identities').select('user_id').where('subject', '=', account.sub).execute();
      assert.deepEqual(identities, [{ user_id: users[0]!.id }]);
      const sessions = await first.db.selectFrom('sessions').select('amr').where('user_id', '=', users[0]!.id).execute();
      assert.equal(sessions.length, 2);
    }
  });
});
