import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { enrolTotp } from '../mfa/mfa-helpers.js';
import { purgeFederatedSignIns } from '../../src/federation/federated-signin-service.js';
import { buildTestApp, createUser, loginAdmin, type Session, type TestApp } from '../helpers/test-app.js';
import { csrfTokenOf, formActionOf, PageBrowser, pkcePair } from '../helpers/page-browser.js';
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
    // The post is answered by a redirect to the upstream, which the page's form-action must allow (Chromium holds it to it).
    assert.match(page.headers['content-security-policy'] as string, new RegExp(`form-action 'self' [^;]*${upstream.issuer.replace(/[.]/g, '\\.')}`));
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
  const linkNotices = async (email: string) =>
    (await testApp.db.selectFrom('email_outbox').select('subject').where('to_address', '=', email).execute()).map((mail) => mail.subject).filter((subject) => subject.includes('was linked'));
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
    const registered = await testApp.db.selectFrom('events').select('data').where('subject_id', '=', user.id).where('type', '=', 'user.registered').executeTakeFirstOrThrow();
    assert.equal((registered.data as { method?: string }).method, 'federation');
    // A new account made by the identity is not told that the identity was linked.
    assert.deepEqual(await linkNotices(account.email), []);
  });

  it("a suspended user's known identity signs nobody in: the error page", async () => {
    const account = person();
    assertCodeForApp((await signInWith(new PageBrowser(testApp.app), providers.plain, account.sub)).callback);
    const user = (await userByEmail(account.email))!;
    const suspended = await asAdmin({ method: 'PUT', url: `/api/users/${user.id}/status`, payload: { status: 'suspended' } });
    assert.equal(suspended.statusCode, 200, suspended.body);
    const before = (await testApp.db.selectFrom('sessions').select('id').where('user_id', '=', user.id).execute()).length;
    assertErrorPage((await signInWith(new PageBrowser(testApp.app), providers.plain, account.sub)).callback);
    assert.equal((await testApp.db.selectFrom('sessions').select('id').where('user_id', '=', user.id).execute()).length, before);
  });
  it('a known identity signs its user in again: no second account, last_used_at moves, amr fed', async () => {
    const account = person();
    assertCodeForApp((await signInWith(new PageBrowser(testApp.app), providers.plain, account.sub)).callback);
    const identity = await testApp.db.selectFrom('user_identities').selectAll().where('subject', '=', account.sub).executeTakeFirstOrThrow();
    await new Promise((resolve) => setTimeout(resolve, 5));
    assertCodeForApp((await signInWith(new PageBrowser(testApp.app), providers.plain, account.sub)).callback);
    const again = await testApp.db.selectFrom('user_identities').selectAll().where('subject', '=', account.sub).executeTakeFirstOrThrow();
    assert.equal(again.user_id, identity.user_id);
    assert.ok(again.last_used_at! > identity.last_used_at!);
    assert.equal((await testApp.db.selectFrom('users').select('id').where('email', '=', account.email).execute()).length, 1);
  });

  it('links an account of the same email only with email_verified and link_by_verified_email, for the role user (user.identity_linked)', async () => {
    const existing = await createUser(testApp.app, { email: `fed-${randomUUID().slice(0, 8)}@example.com` });
    const linkable = person({ email: existing.email, email_verified: true });
    assertCodeForApp((await signInWith(new PageBrowser(testApp.app), providers.linking, linkable.sub)).callback);
    const identity = await testApp.db.selectFrom('user_identities').selectAll().where('subject', '=', linkable.sub).executeTakeFirstOrThrow();
    assert.equal(identity.user_id, existing.id);
    const events = await testApp.db.selectFrom('events').select(['type', 'data']).where('subject_id', '=', existing.id).where('type', '=', 'user.identity_linked').execute();
    assert.equal(events.length, 1);
    assert.deepEqual(events[0]!.data, { provider_id: providers.linking, identity_id: identity.id });
    // The account that was there gained a way in: its owner is told.
    assert.deepEqual(await linkNotices(existing.email), ['Your Linking account was linked to your account']);

    // The same verified email at a provider without link_by_verified_email: the error page, nothing linked, no account made.
    const otherProvider = person({ email: existing.email, email_verified: true });
    assertErrorPage((await signInWith(new PageBrowser(testApp.app), providers.plain, otherProvider.sub)).callback);
    // An unverified email at the linking provider: the same.
    const unverified = person({ email: existing.email, email_verified: false });
    assertErrorPage((await signInWith(new PageBrowser(testApp.app), providers.linking, unverified.sub)).callback);
    const linked = await testApp.db.selectFrom('user_identities').select('subject').where('subject', 'in', [otherProvider.sub, unverified.sub]).execute();
    assert.deepEqual(linked, []);
    assert.equal((await testApp.db.selectFrom('users').select('id').where('email', '=', existing.email).execute()).length, 1);
  });

  it("never links a manager's account by email: the error page, nothing linked", async () => {
    const manager = await createUser(testApp.app, { role: 'manager', admin, email: `fed-${randomUUID().slice(0, 8)}@example.com` });
    const account = person({ email: manager.email, email_verified: true });
    const { callback } = await signInWith(new PageBrowser(testApp.app), providers.linking, account.sub);
    assertErrorPage(callback);
    assert.equal(callback.headers['set-cookie'] === undefined || !String(callback.headers['set-cookie']).includes('shop_sid'), true);
    assert.equal(await testApp.db.selectFrom('user_identities').select('id').where('subject', '=', account.sub).executeTakeFirst(), undefined);
  });

  it('a user with a second factor gets the second-factor page after the provider; the session is amr fed, otp, mfa', async () => {
    const user = await createUser(testApp.app, { email: `fed-${randomUUID().slice(0, 8)}@example.com` });
    const { device } = await enrolTotp(testApp.app, user);
    const account = person({ email: user.email, email_verified: true });
    const browser = new PageBrowser(testApp.app);
    const { callback } = await signInWith(browser, providers.linking, account.sub);
    assert.equal(callback.statusCode, 200, callback.body);
    assert.match(callback.body, /name="action" value="totp"/);
    // The page's form carries on with the authorization request, not the callback's URL.
    assert.match(formActionOf(callback.body), /^\/oauth\/authorize\?/);
    const done = await browser.post(formActionOf(callback.body), { csrf_token: csrfTokenOf(callback.body), action: 'totp', code: await device.next() });
    assertCodeForApp(done);
    assert.deepEqual((await sessionOf(user.id))?.amr, ['fed', 'otp', 'mfa']);
  });

  it('a callback with a wrong state, from another browser, or replayed is the error page and signs nobody in', async () => {
    const account = person();
    const browser = new PageBrowser(testApp.app);
    const started = await pressButton(browser, providers.plain);
    const callbackUrl = await signInAtUpstream(started.headers.location as string, account.sub);
    const path = `${callbackUrl.pathname}${callbackUrl.search}`;
    const wrongState = new URLSearchParams(callbackUrl.search);
    wrongState.set('state', 'not-the-state');
    assertErrorPage(await browser.get(`${callbackUrl.pathname}?${wrongState}`));
    // Another browser (its own CSRF cookie) with the right state and code: login CSRF refused.
    const stranger = new PageBrowser(testApp.app);
    await stranger.get(authorizeUrl());
    assertErrorPage(await stranger.get(path));
    // Another provider's callback path with this state.
    assertErrorPage(await browser.get(`/oauth/callback/${providers.linking}${callbackUrl.search}`));
    // The right one works once; its replay fails.
    assertCodeForApp(await browser.get(path));
    assertErrorPage(await browser.get(path));
    assert.equal((await testApp.db.selectFrom('users').select('id').where('email', '=', account.email).execute()).length, 1);
  });

  it("a provider's error reply, or a code the provider refuses, is the error page; nothing is made", async () => {
    const account = person();
    const browser = new PageBrowser(testApp.app);
    const started = await pressButton(browser, providers.plain);
    const state = new URL(started.headers.location as string).searchParams.get('state')!;
    assertErrorPage(await browser.get(`/oauth/callback/${providers.plain}?${new URLSearchParams({ error: 'access_denied', state, iss: upstream.issuer })}`));
    const again = await pressButton(browser, providers.plain);
    const callbackUrl = await signInAtUpstream(again.headers.location as string, account.sub);
    const forged = new URLSearchParams(callbackUrl.search);
    forged.set('code', 'a-code-the-provider-never-issued');
    assertErrorPage(await browser.get(`${callbackUrl.pathname}?${forged}`));
    assert.equal(await userByEmail(account.email), undefined);
  });

  it("a disabled provider's button is gone and its callbacks fail; enabled again it works", async () => {
    const account = person();
    const browser = new PageBrowser(testApp.app);
    const started = await pressButton(browser, providers.plain);
    const callbackUrl = await signInAtUpstream(started.headers.location as string, account.sub);
    const disabled = await asAdmin({ method: 'PATCH', url: `/api/identity-providers/${providers.plain}`, headers: MERGE_PATCH, payload: JSON.stringify({ enabled: false }) });
    assert.equal(disabled.statusCode, 200, disabled.body);
    try {
      assertErrorPage(await browser.get(`${callbackUrl.pathname}${callbackUrl.search}`));
      const page = await browser.get(authorizeUrl());
      assert.doesNotMatch(page.body, new RegExp(providers.plain));
      assertErrorPage(await browser.submit(page, 'provider', { provider_id: providers.plain }));
      assert.equal(await userByEmail(account.email), undefined);
    } finally {
      const enabled = await asAdmin({ method: 'PATCH', url: `/api/identity-providers/${providers.plain}`, headers: MERGE_PATCH, payload: JSON.stringify({ enabled: true }) });
      assert.equal(enabled.statusCode, 200, enabled.body);
    }
    assertCodeForApp((await signInWith(new PageBrowser(testApp.app), providers.plain, account.sub)).callback);
  });

  it('a provider whose token endpoint does not answer fails within about 10 s on the error page', async () => {
    const hanging = http.createServer(() => {});
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', () => resolve()));
    const tokenEndpoint = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/token`;
    const providerId = await createProvider({ name: 'Hanging', button_label: 'Sign in with Hanging' });
    // The stored discovery document names a token endpoint that never answers (the re-read would put the real one back within the hour).
    const stored = await testApp.db.selectFrom('identity_providers').select('discovery').where('id', '=', providerId).executeTakeFirstOrThrow();
    await testApp.db.updateTable('identity_providers').set({ discovery: JSON.stringify({ ...stored.discovery, token_endpoint: tokenEndpoint }) }).where('id', '=', providerId).execute();
    try {
      const account = person();
      const browser = new PageBrowser(testApp.app);
      const started = await pressButton(browser, providerId);
      const callbackUrl = await signInAtUpstream(started.headers.location as string, account.sub);
      const began = Date.now();
      assertErrorPage(await browser.get(`${callbackUrl.pathname}${callbackUrl.search}`));
      const took = Date.now() - began;
      assert.ok(took >= 9_000 && took < 13_000, `took ${took} ms`);
      assert.equal(await userByEmail(account.email), undefined);
    } finally {
      hanging.closeAllConnections();
      await new Promise<void>((resolve) => hanging.close(() => resolve()));
    }
  });
  it("an ID token that does not validate (another nonce; another issuer) is the error page; openid-client alone checks it", async () => {
    // Another nonce: the attempt's row is given another one after the button, so the ID token the provider signs carries a nonce the callback did not expect.
    const account = person();
    const browser = new PageBrowser(testApp.app);
    const started = await pressButton(browser, providers.plain);
    const callbackUrl = await signInAtUpstream(started.headers.location as string, account.sub);
    await testApp.db.updateTable('federated_sign_ins').set({ nonce: 'another-nonce' }).where('used_at', 'is', null).where('provider_id', '=', providers.plain).execute();
    assertErrorPage(await browser.get(`${callbackUrl.pathname}${callbackUrl.search}`));
    assert.equal(await userByEmail(account.email), undefined);

    // Another issuer: a provider whose stored document names the same server under another host; the provider's `iss` (and its ID token's) is not that one.
    const providerId = await createProvider({ name: 'Other issuer', button_label: 'Sign in with Other' });
    const stored = await testApp.db.selectFrom('identity_providers').select('discovery').where('id', '=', providerId).executeTakeFirstOrThrow();
    await testApp.db.updateTable('identity_providers').set({ discovery: JSON.stringify({ ...stored.discovery, issuer: upstream.otherIssuer }) }).where('id', '=', providerId).execute();
    const secondBrowser = new PageBrowser(testApp.app);
    const again = await pressButton(secondBrowser, providerId);
    const secondCallback = await signInAtUpstream(again.headers.location as string, account.sub);
    assertErrorPage(await secondBrowser.get(`${secondCallback.pathname}${secondCallback.search}`));
    assert.equal(await userByEmail(account.email), undefined);
  });
  it("a deleted provider's callback fails: its attempts went with it", async () => {
    const providerId = await createProvider({ name: 'Short-lived', button_label: 'Sign in with Short-lived' });
    const account = person();
    const browser = new PageBrowser(testApp.app);
    const started = await pressButton(browser, providerId);
    const callbackUrl = await signInAtUpstream(started.headers.location as string, account.sub);
    const deleted = await asAdmin({ method: 'DELETE', url: `/api/identity-providers/${providerId}` });
    assert.equal(deleted.statusCode, 204, deleted.body);
    assertErrorPage(await browser.get(`${callbackUrl.pathname}${callbackUrl.search}`));
    assertErrorPage(await browser.get(`/oauth/callback/not-a-uuid${callbackUrl.search}`));
    assert.equal(await userByEmail(account.email), undefined);
  });

  it('the purge job removes attempts past their 10 minutes and keeps live ones', async () => {
    const browser = new PageBrowser(testApp.app);
    await pressButton(browser, providers.plain);
    const live = await testApp.db.selectFrom('federated_sign_ins').select('id').where('used_at', 'is', null).execute();
    assert.ok(live.length > 0);
    await testApp.db.updateTable('federated_sign_ins').set({ expires_at: new Date(Date.now() - 1000) }).where('id', '=', live[0]!.id).execute();
    await purgeFederatedSignIns(testApp.db);
    assert.equal(await testApp.db.selectFrom('federated_sign_ins').select('id').where('id', '=', live[0]!.id).executeTakeFirst(), undefined);
    const left = await testApp.db.selectFrom('federated_sign_ins').select('id').where('expires_at', '<', new Date()).execute();
    assert.deepEqual(left, []);
    assert.equal((await testApp.db.selectFrom('federated_sign_ins').select('id').where('used_at', 'is', null).execute()).length, live.length - 1);
  });
  it('with registration closed a new identity without an account is the error page, and nothing is made', async () => {
    const closed = await buildTestApp({ environment: { PUBLIC_URL, ALLOW_REGISTRATION: 'false' } });
    try {
      const closedAdmin = await loginAdmin(closed.app);
      const client = await closed.app.inject({ method: 'POST', url: '/api/clients', headers: closedAdmin.auth, payload: { name: 'Storefront', type: 'public', first_party: true, redirect_uris: [CALLBACK], scopes: ['openid', 'email'] } });
      assert.equal(client.statusCode, 201, client.body);
      const provider = await closed.app.inject({ method: 'POST', url: '/api/identity-providers', headers: closedAdmin.auth, payload: { name: 'Upstream', issuer: upstream.issuer, client_id: 'shop', client_secret: SECRET, button_label: 'Sign in with Upstream' } });
      assert.equal(provider.statusCode, 201, provider.body);
      const account = person();
      const browser = new PageBrowser(closed.app);
      const query = new URLSearchParams({ response_type: 'code', client_id: client.json().id, redirect_uri: CALLBACK, scope: 'openid email', code_challenge: pkcePair().challenge, code_challenge_method: 'S256' });
      const page = await browser.get(`/oauth/authorize?${query}`);
      const started = await browser.submit(page, 'provider', { provider_id: provider.json().id });
      assert.equal(started.statusCode, 303, started.body);
      const callbackUrl = await signInAtUpstream(started.headers.location as string, account.sub);
      assertErrorPage(await browser.get(`${callbackUrl.pathname}${callbackUrl.search}`));
      assert.equal(await closed.db.selectFrom('users').select('id').where('email', '=', account.email).executeTakeFirst(), undefined);
      assert.equal(await closed.db.selectFrom('user_identities').select('id').where('subject', '=', account.sub).executeTakeFirst(), undefined);
    } finally {
      await closed.close();
    }
  });
  /**
   * A token endpoint in front of the upstream's: it passes the exchange on, then alters the ID
   * token's claims and signs it again with the upstream's key (or another key), so that exactly one
   * thing about an otherwise valid ID token is wrong. A provider whose stored discovery document
   * names it as token endpoint exchanges its codes there.
   */
  async function alteringProvider(alter: (claims: Record<string, unknown>) => Record<string, unknown>, key?: ReturnType<typeof generateKeyPairSync>['privateKey']) {
    const providerId = await createProvider({ name: 'Altered', button_label: 'Sign in with Altered' });
    const stored = await testApp.db.selectFrom('identity_providers').select('discovery').where('id', '=', providerId).executeTakeFirstOrThrow();
    const realEndpoint = stored.discovery.token_endpoint as string;
    const proxy = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', async () => {
        const answer = await fetch(realEndpoint, { method: 'POST', headers: { 'content-type': request.headers['content-type'] ?? '', authorization: request.headers.authorization ?? '' }, body: Buffer.concat(chunks) });
        const body = (await answer.json()) as Record<string, unknown>;
        if (typeof body.id_token === 'string') {
          const claims = JSON.parse(Buffer.from(body.id_token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
          body.id_token = upstream.signIdToken(alter(claims), key);
        }
        response.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', () => resolve()));
    const tokenEndpoint = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/token`;
    await testApp.db.updateTable('identity_providers').set({ discovery: JSON.stringify({ ...stored.discovery, token_endpoint: tokenEndpoint }) }).where('id', '=', providerId).execute();
    return {
      providerId,
      stop: async () => {
        proxy.closeAllConnections();
        await new Promise<void>((resolve) => proxy.close(() => resolve()));
        await asAdmin({ method: 'DELETE', url: `/api/identity-providers/${providerId}` });
      },
    };
  }

  it('an ID token with another aud, another iss, past its exp, or signed by an unknown key is the error page; unaltered it works', async () => {
    const now = Math.floor(Date.now() / 1000);
    const cases: [string, (claims: Record<string, unknown>) => Record<string, unknown>, ReturnType<typeof generateKeyPairSync>['privateKey']?][] = [
      ['unaltered (re-signed by the upstream key)', (claims) => claims],
      ['another aud', (claims) => ({ ...claims, aud: 'another-client' })],
      ['another iss', (claims) => ({ ...claims, iss: upstream.otherIssuer })],
      ['expired', (claims) => ({ ...claims, iat: now - 7200, exp: now - 3600 })],
      ['an unknown key', (claims) => claims, generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey],
    ];
    for (const [name, alter, key] of cases) {
      const altered = await alteringProvider(alter, key);
      try {
        const account = person();
        const { callback } = await signInWith(new PageBrowser(testApp.app), altered.providerId, account.sub);
        if (name.startsWith('unaltered')) {
          assertCodeForApp(callback);
          continue;
        }
        assert.equal(callback.statusCode, 400, `${name}: ${callback.body}`);
        assertErrorPage(callback);
        assert.equal(await userByEmail(account.email), undefined, name);
      } finally {
        await altered.stop();
      }
    }
  });
});
