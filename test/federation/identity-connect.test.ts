import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp, createUser, loginAdmin, type Session, type TestApp } from '../helpers/test-app.js';
import { PageBrowser, pkcePair } from '../helpers/page-browser.js';
import { signInAtUpstream } from '../helpers/upstream-browser.js';
import { startUpstreamProvider, type UpstreamProvider } from '../helpers/upstream-provider.js';

const PUBLIC_URL = 'http://127.0.0.1:3000';
const CALLBACK = 'https://shop.example.com/callback';
const SECRET = 'upstream-client-secret-of-the-shop';
const MERGE_PATCH = { 'content-type': 'application/merge-patch+json' };

/** API.md section 20: staff (and any user) connect a provider from a signed-in session, the profile's "Connect". */
describe('connecting another provider from a signed-in session', () => {
  let testApp: TestApp;
  let admin: Session;
  let upstream: UpstreamProvider;
  let providerId: string;

  before(async () => {
    upstream = await startUpstreamProvider({
      client: { client_id: 'shop', client_secret: SECRET, redirect_uris: [`${PUBLIC_URL}/oauth/callback/any`] },
      redirectUriPrefix: `${PUBLIC_URL}/oauth/callback/`,
    });
    testApp = await buildTestApp({ environment: { PUBLIC_URL, SIGNING_KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64') } });
    admin = await loginAdmin(testApp.app);
    providerId = await createProvider({ name: 'Upstream', button_label: 'Continue with Upstream' });
  });
  after(async () => {
    await testApp?.close();
    await upstream?.stop();
  });

  async function createProvider(extra: Record<string, unknown>): Promise<string> {
    const created = await testApp.app.inject({ method: 'POST', url: '/api/identity-providers', headers: admin.auth, payload: { issuer: upstream.issuer, client_id: 'shop', client_secret: SECRET, ...extra } });
    assert.equal(created.statusCode, 201, created.body);
    return created.json().id;
  }
  const person = () => {
    const account = { sub: `sub-${randomUUID()}`, email: `upstream-${randomUUID().slice(0, 8)}@example.com`, email_verified: true };
    upstream.accounts.set(account.sub, account);
    return account;
  };
  /** The profile's "Connect" in `browser` for `user`: the API's answer. */
  const connect = (browser: PageBrowser, user: Session, id = providerId) => browser.fetchJson('POST', '/api/users/profile/identities/connect', user.auth, { provider_id: id });
  /** Connect, sign in at the upstream as `sub`, and the callback's reply in `browser`. */
  async function connectAs(browser: PageBrowser, user: Session, sub: string, between?: () => Promise<void>): Promise<LightMyRequestResponse> {
    const started = await connect(browser, user);
    assert.equal(started.statusCode, 200, started.body);
    const callbackUrl = await signInAtUpstream(started.json().authorization_url, sub);
    assert.equal(`${callbackUrl.origin}${callbackUrl.pathname}`, `${PUBLIC_URL}/oauth/callback/${providerId}`);
    await between?.();
    return browser.get(`${callbackUrl.pathname}${callbackUrl.search}`);
  }
  const identitiesOf = (userId: string) => testApp.db.selectFrom('user_identities').select(['user_id', 'provider_id', 'subject']).where('user_id', '=', userId).execute();
  const assertRefused = (reply: LightMyRequestResponse) => {
    assert.equal(reply.statusCode, 400, reply.body);
    assert.match(reply.headers['content-type'] as string, /text\/html/);
    assert.match(reply.body, /could not be connected/);
  };

  it('a manager connects an identity: linked (user.identity_linked), listed, and it then signs the manager in on the hosted page', async () => {
    const manager = await createUser(testApp.app, { role: 'manager', admin });
    const offered = await testApp.app.inject({ method: 'GET', url: '/api/users/profile/connectable-providers', headers: manager.auth });
    assert.equal(offered.statusCode, 200, offered.body);
    assert.deepEqual(offered.json().items, [{ id: providerId, name: 'Upstream', button_label: 'Continue with Upstream' }]);

    const account = person();
    const browser = new PageBrowser(testApp.app);
    const done = await connectAs(browser, manager, account.sub);
    assert.equal(done.statusCode, 303, done.body);
    assert.equal(done.headers.location, `${PUBLIC_URL}/admin/#/profile?connected=${providerId}`);
    assert.deepEqual(await identitiesOf(manager.id), [{ user_id: manager.id, provider_id: providerId, subject: account.sub }]);
    const event = await testApp.db.selectFrom('events').selectAll().where('type', '=', 'user.identity_linked').where('subject_id', '=', manager.id).executeTakeFirstOrThrow();
    assert.equal((event.data as { provider_id: string }).provider_id, providerId);
    const notices = await testApp.db.selectFrom('email_outbox').select('subject').where('to_address', '=', manager.email).execute();
    assert.deepEqual(notices.map((mail) => mail.subject).filter((subject) => subject !== 'Confirm your email address'), ['Your Upstream account was linked to your account'], 'the account is told, once');
    const listed = await testApp.app.inject({ method: 'GET', url: '/api/users/profile/identities', headers: manager.auth });
    assert.deepEqual(listed.json().items.map((identity: { provider_id: string; email: string }) => [identity.provider_id, identity.email]), [[providerId, account.email]]);

    // The button on the sign-in page now signs the manager in (a known identity), with amr fed.
    const created = await testApp.app.inject({ method: 'POST', url: '/api/clients', headers: admin.auth, payload: { name: `Storefront ${randomUUID().slice(0, 6)}`, type: 'public', first_party: true, redirect_uris: [CALLBACK], scopes: ['openid', 'email'] } });
    const query = new URLSearchParams({ response_type: 'code', client_id: created.json().id, redirect_uri: CALLBACK, scope: 'openid', state: 's', code_challenge: pkcePair().challenge, code_challenge_method: 'S256' });
    const signingIn = new PageBrowser(testApp.app);
    const page = await signingIn.get(`/oauth/authorize?${query}`);
    const started = await signingIn.submit(page, 'provider', { provider_id: providerId });
    const callbackUrl = await signInAtUpstream(started.headers.location as string, account.sub);
    const back = await signingIn.get(`${callbackUrl.pathname}${callbackUrl.search}`);
    assert.equal(back.statusCode, 303, back.body);
    assert.ok(new URL(back.headers.location as string).searchParams.get('code'));
    const session = await testApp.db.selectFrom('sessions').select(['user_id', 'amr']).where('user_id', '=', manager.id).orderBy('created_at', 'desc').executeTakeFirstOrThrow();
    assert.deepEqual(session.amr, ['fed']);
  });

  it('links nothing when the session that pressed Connect ended before the callback', async () => {
    const user = await createUser(testApp.app);
    const logout = async () => {
      const ended = await testApp.app.inject({ method: 'POST', url: '/api/auth/logout', payload: { refresh_token: user.refreshToken } });
      assert.equal(ended.statusCode, 204);
    };
    assertRefused(await connectAs(new PageBrowser(testApp.app), user, person().sub, logout));
    assert.deepEqual(await identitiesOf(user.id), []);
  });

  it("refuses an identity of another user, a callback in another browser, and a replay; the caller's own identity again changes nothing", async () => {
    const first = await createUser(testApp.app);
    const second = await createUser(testApp.app);
    const account = person();
    const browser = new PageBrowser(testApp.app);
    assert.equal((await connectAs(browser, first, account.sub)).statusCode, 303);
    assertRefused(await connectAs(new PageBrowser(testApp.app), second, account.sub));
    assert.deepEqual(await identitiesOf(second.id), []);
    // Connecting the same identity to its own user again is a success that adds nothing.
    assert.equal((await connectAs(browser, first, account.sub)).statusCode, 303);
    assert.equal((await identitiesOf(first.id)).length, 1);

    // The attempt is the browser's that called the API: the link carried to another browser connects nothing.
    const other = person();
    const started = await connect(browser, second);
    const callbackUrl = await signInAtUpstream(started.json().authorization_url, other.sub);
    const path = `${callbackUrl.pathname}${callbackUrl.search}`;
    const stranger = new PageBrowser(testApp.app);
    await stranger.fetchJson('GET', '/api/users/profile/connectable-providers', second.auth);
    assert.equal((await stranger.get(path)).statusCode, 400);
    assert.equal((await browser.get(path)).statusCode, 303, 'the right browser, once');
    assert.equal((await browser.get(path)).statusCode, 400, 'a replay');
    assert.deepEqual((await identitiesOf(second.id)).map((identity) => identity.subject), [other.sub]);
  });

  it('404 for a provider that is not there or is disabled, 400 for a malformed id, 401 without a token; disabled, the list leaves it out', async () => {
    const user = await createUser(testApp.app);
    const browser = new PageBrowser(testApp.app);
    assert.equal((await connect(browser, user, randomUUID())).statusCode, 404);
    assert.equal((await connect(browser, user, 'not-a-uuid')).statusCode, 400);
    assert.equal((await browser.fetchJson('POST', '/api/users/profile/identities/connect', {}, { provider_id: providerId })).statusCode, 401);
    const disabled = await createProvider({ name: 'Off', button_label: 'Off' });
    await testApp.app.inject({ method: 'PATCH', url: `/api/identity-providers/${disabled}`, headers: { ...admin.auth, ...MERGE_PATCH }, payload: { enabled: false } });
    assert.equal((await connect(browser, user, disabled)).statusCode, 404);
    const offered = await testApp.app.inject({ method: 'GET', url: '/api/users/profile/connectable-providers', headers: user.auth });
    assert.ok(!offered.json().items.some((item: { id: string }) => item.id === disabled));
    await testApp.app.inject({ method: 'DELETE', url: `/api/identity-providers/${disabled}`, headers: admin.auth });
  });

  it("asks Apple for a form post, whose cross-site POST to the callback is turned into the callback's GET", async () => {
    const appleKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const apple = await createProvider({ name: 'Apple', button_label: 'Sign in with Apple', client_secret: undefined, apple_team_id: 'TEAM123456', apple_key_id: 'KEY1234567', apple_private_key: appleKey });
    const user = await createUser(testApp.app);
    const started = await connect(new PageBrowser(testApp.app), user, apple);
    assert.equal(new URL(started.json().authorization_url).searchParams.get('response_mode'), 'form_post');
    await testApp.app.inject({ method: 'DELETE', url: `/api/identity-providers/${apple}`, headers: admin.auth });

    // The form post carries the fields on as the GET's query, with nothing else; the GET then does everything.
    const account = person();
    const browser = new PageBrowser(testApp.app);
    const connecting = await connect(browser, user);
    const callbackUrl = await signInAtUpstream(connecting.json().authorization_url, account.sub);
    const fields = Object.fromEntries(callbackUrl.searchParams);
    const posted = await browser.post(`/oauth/callback/${providerId}`, { ...fields, user: '{"name":{"firstName":"Ada"}}' }, { 'sec-fetch-site': 'cross-site' });
    assert.equal(posted.statusCode, 303, posted.body);
    const location = new URL(posted.headers.location as string);
    assert.equal(`${location.origin}${location.pathname}`, `${PUBLIC_URL}/oauth/callback/${providerId}`);
    assert.deepEqual(Object.fromEntries(location.searchParams), fields);
    assert.equal((await browser.get(`${location.pathname}${location.search}`)).statusCode, 303);
    assert.deepEqual((await identitiesOf(user.id)).map((identity) => identity.subject), [account.sub]);
  });
});
