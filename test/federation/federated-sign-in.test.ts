import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { codeFor } from '../helpers/totp-device.js';
import { buildTestApp, createUser, loginAdmin, type Session, type TestApp } from '../helpers/test-app.js';
import { PageBrowser, pkcePair } from '../helpers/page-browser.js';
import { signInAtUpstream } from '../helpers/upstream-browser.js';
import { startUpstreamProvider, type UpstreamProvider } from '../helpers/upstream-provider.js';

const PUBLIC_URL = 'http://127.0.0.1:3000';
const CALLBACK = 'https://shop.example.com/callback';
const SECRET = 'upstream-client-secret-of-the-shop';
const MERGE_PATCH = { 'content-type': 'application/merge-patch+json' };

/** API.md section 20, the flow: the sign-in page's button, the upstream (oidc-provider), the callback. */
describe('sign in with another identity provider', () => {
  let testApp: TestApp;
  let admin: Session;
  let upstream: UpstreamProvider;
  let appId: string;
  const providers = {} as Record<'linking' | 'plain', string>;

  before(async () => {
    upstream = await startUpstreamProvider({
      client: { client_id: 'shop', client_secret: SECRET, redirect_uris: [`${PUBLIC_URL}/oauth/callback/any`] },
      redirectUriPrefix: `${PUBLIC_URL}/oauth/callback/`,
    });
    testApp = await buildTestApp({ environment: { PUBLIC_URL, SIGNING_KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64') } });
    admin = await loginAdmin(testApp.app);
    const created = await asAdmin({ method: 'POST', url: '/api/clients', payload: { name: 'Storefront', type: 'public', first_party: true, redirect_uris: [CALLBACK], scopes: ['openid', 'email', 'profile'] } });
    assert.equal(created.statusCode, 201, created.body);
    appId = created.json().id;
    providers.linking = await createProvider({ name: 'Linking', button_label: 'Sign in with Linking', link_by_verified_email: true });
    providers.plain = await createProvider({ name: 'Plain', button_label: 'Sign in with Plain' });
  });
  after(async () => {
    await testApp?.close();
    await upstream?.stop();
  });

  function asAdmin(request: InjectOptions) {
    return testApp.app.inject({ ...request, headers: { ...admin.auth, ...request.headers } });
  }
  async function createProvider(extra: Record<string, unknown>): Promise<string> {
    const created = await asAdmin({ method: 'POST', url: '/api/identity-providers', payload: { issuer: upstream.issuer, client_id: 'shop', client_secret: SECRET, ...extra } });
    assert.equal(created.statusCode, 201, created.body);
    return created.json().id;
  }
  const authorizeUrl = () =>
    `/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: appId, redirect_uri: CALLBACK, scope: 'openid email', state: 'app-state', code_challenge: pkcePair().challenge, code_challenge_method: 'S256' })}`;
  const person = (extra: Partial<{ email: string; email_verified: boolean }> = {}) => {
    const account = { sub: `sub-${randomUUID()}`, email: `fed-${randomUUID().slice(0, 8)}@example.com`, email_verified: true, ...extra };
    upstream.accounts.set(account.sub, account);
    return account;
  };

  /** The sign-in page, then the provider's button: the 303 to the upstream's authorization endpoint. */
  async function pressButton(browser: PageBrowser, providerId: string): Promise<LightMyRequestResponse> {
    const page = await browser.get(authorizeUrl());
    assert.equal(page.statusCode, 200, page.body);
    assert.match(page.body, new RegExp(`name="provider_id" value="${providerId}"`));
    return browser.submit(page, 'provider', { provider_id: providerId });
  }

  /** The whole flow for `sub`: the button, the upstream, the callback; the callback's reply. */
  async function signInWith(browser: PageBrowser, providerId: string, sub: string): Promise<{ callback: LightMyRequestResponse; callbackUrl: URL }> {
    const started = await pressButton(browser, providerId);
    assert.equal(started.statusCode, 303, started.body);
    const callbackUrl = await signInAtUpstream(started.headers.location as string, sub);
    assert.equal(`${callbackUrl.origin}${callbackUrl.pathname}`, `${PUBLIC_URL}/oauth/callback/${providerId}`);
    const callback = await browser.get(`${callbackUrl.pathname}${callbackUrl.search}`);
    return { callback, callbackUrl };
  }
  const sessionOf = async (userId: string) => testApp.db.selectFrom('sessions').select(['amr', 'user_id']).where('user_id', '=', userId).orderBy('created_at', 'desc').executeTakeFirst();
  const userByEmail = (email: string) => testApp.db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
  const assertCodeForApp = (reply: LightMyRequestResponse) => {
    assert.equal(reply.statusCode, 303, reply.body);
    const location = new URL(reply.headers.location as string);
    assert.equal(`${location.origin}${location.pathname}`, CALLBACK);
    assert.ok(location.searchParams.get('code'));
    assert.equal(location.searchParams.get('state'), 'app-state');
  };
  const assertErrorPage = (reply: LightMyRequestResponse) => {
    assert.equal(reply.statusCode, 400, reply.body);
    assert.match(reply.headers['content-type'] as string, /text\/html/);
    assert.match(reply.body, /no account could be used/);
  };

  it('a new identity makes an account (registration on), linked, signed in with amr fed, and the app gets its code', async () => {
    const account = person({ email_verified: false });
    const { callback } = await signInWith(new PageBrowser(testApp.app), providers.plain, account.sub);
    assertCodeForApp(callback);
    const user = await userByEmail(account.email);
    assert.ok(user);
    assert.equal(user.email_verified, false);
    assert.equal(user.password_hash, null);
    assert.equal(user.role, 'user');
    assert.deepEqual((await sessionOf(user.id))?.amr, ['fed']);
    const identity = await testApp.db.selectFrom('user_identities').selectAll().where('subject', '=', account.sub).executeTakeFirstOrThrow();
    assert.equal(identity.user_id, user.id);
    assert.ok(identity.last_used_at);
  });
});
