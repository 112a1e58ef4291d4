import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import * as oauth from 'openid-client';
import { buildTestApp, createUser, loginAdmin, newVariantBody, onPostgres, problemOf, useTwoInstancesWithAdmin, type Session, type TestApp } from '../helpers/test-app.js';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });
const basic = (id: string, secret: string) => ({ authorization: `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}` });

/** API.md section 11: other services call the API as API clients, with scopes, never a staff password. */
describe('API clients', () => {
  let testApp: TestApp;
  let admin: Session;
  before(async () => {
    // Ed25519 keys from the database (no JWT_SECRET), as a deployment runs by default.
    testApp = await buildTestApp({ environment: { JWT_SECRET: '' } });
    admin = await loginAdmin(testApp.app);
  });
  after(() => testApp.close());
  const inject = (request: InjectOptions) => testApp.app.inject(request);
  const createClient = async (scopes: string[], extra: Record<string, unknown> = {}) => {
    const created = await inject({ method: 'POST', url: '/api/clients', headers: admin.auth, payload: { name: 'Checkout service', scopes, ...extra } });
    assert.equal(created.statusCode, 201, created.body);
    return created.json() as { id: string; secret: string; version: number; secrets: { id: string; prefix: string }[] };
  };
  const token = (payload: string, headers: Record<string, string> = {}) => inject({ method: 'POST', url: '/api/oauth/token', headers: { ...FORM, ...headers }, payload });

  it('creates a client with a secret shown once and kept only as its hash; lists and reads it by prefix', async () => {
    const created = await inject({ method: 'POST', url: '/api/clients', headers: admin.auth, payload: { name: '  Checkout  ', description: 'Reserves stock', scopes: ['reservations:write', 'variants:read'] } });
    assert.equal(created.statusCode, 201);
    assert.equal(created.headers['cache-control'], 'no-store');
    const client = created.json();
    assert.equal(created.headers.location, `/api/clients/${client.id}`);
    assert.equal(created.headers.etag, '"1"');
    assert.match(client.secret, /^shop_sk_[A-Za-z0-9_-]{43}$/);
    assert.equal(client.name, 'Checkout');
    assert.deepEqual(client.secrets.map((secret: { prefix: string }) => secret.prefix), [client.secret.slice(0, 12)]);
    assert.equal(client.created_by, admin.id);
    const stored = await testApp.db.selectFrom('api_client_secrets').selectAll().where('client_id', '=', client.id).executeTakeFirstOrThrow();
    assert.notEqual(stored.secret_hash, client.secret);
    assert.doesNotMatch(JSON.stringify(stored), new RegExp(client.secret.slice(12)), 'the value is kept nowhere');
    const read = await inject({ method: 'GET', url: `/api/clients/${client.id}`, headers: admin.auth });
    assert.equal(read.statusCode, 200);
    assert.equal(read.json().secret, undefined);
    assert.equal((await inject({ method: 'GET', url: `/api/clients/${client.id}`, headers: { ...admin.auth, 'if-none-match': '"1"' } })).statusCode, 304);
    const page = (await inject({ method: 'GET', url: '/api/clients?include_total=true', headers: admin.auth })).json();
    assert.ok(page.total >= 1);
    assert.ok(!JSON.stringify(page).includes(client.secret));
    const events = await testApp.db.selectFrom('events').selectAll().where('subject_id', '=', client.id).execute();
    assert.deepEqual(events.map((event) => event.type), ['client.created'], 'its first secret is part of client.created');
    assert.ok(!JSON.stringify(events).includes(client.secret) && !JSON.stringify(events).includes(stored.secret_hash));
    for (const payload of [{ name: 'x', scopes: [] }, { name: 'x', scopes: ['nope:read'] }, { name: 'x', scopes: ['variants:read', 'variants:read'] }, { name: 'x', scopes: ['variants:read'], rate_limit: 0 }]) {
      assert.equal((await inject({ method: 'POST', url: '/api/clients', headers: admin.auth, payload })).statusCode, 400, JSON.stringify(payload));
    }
  });

  it('lets the secret, as a bearer token, do what its scopes open and nothing else', async () => {
    const client = await createClient(['reservations:write', 'variants:read']);
    const variant = (await inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: newVariantBody(5) })).json();
    assert.equal((await inject({ method: 'GET', url: `/api/variants/${variant.id}`, headers: bearer(client.secret) })).statusCode, 200);
    const reserved = await inject({ method: 'POST', url: '/api/reservations', headers: bearer(client.secret), payload: { lines: [{ variant_id: variant.id, quantity: 2 }] } });
    assert.equal(reserved.statusCode, 201);
    assert.equal((await inject({ method: 'GET', url: `/api/reservations/${reserved.json().id}`, headers: bearer(client.secret) })).statusCode, 200);
    const priced = await inject({ method: 'PATCH', url: `/api/variants/${variant.id}`, headers: bearer(client.secret), payload: { price: 1 } });
    assert.equal(priced.statusCode, 403);
    assert.equal(problemOf(priced).code, 'insufficient_scope');
    assert.equal(priced.headers['www-authenticate'], 'Bearer error="insufficient_scope", scope="variants:write"');
    assert.equal((await inject({ method: 'GET', url: `/api/variants/${variant.id}`, headers: admin.auth })).json().price, variant.price, 'nothing changed');
    // Checked before a 404, as roles are.
    assert.equal(problemOf(await inject({ method: 'DELETE', url: `/api/variants/${randomUUID()}`, headers: bearer(client.secret) })).code, 'insufficient_scope');
    for (const [method, url] of [['GET', '/api/users/profile'], ['GET', '/api/auth/sessions'], ['GET', '/api/clients'], ['GET', '/api/webhooks'], ['GET', '/api/signing-keys']] as const) {
      const refused = await inject({ method, url, headers: bearer(client.secret) });
      assert.equal(refused.statusCode, 403, url);
      assert.equal(problemOf(refused).code, 'forbidden', `${url} is for users only`);
    }
    const event = await testApp.db.selectFrom('events').selectAll().where('subject_id', '=', reserved.json().id).executeTakeFirstOrThrow();
    assert.deepEqual([event.actor_id, event.actor_type], [client.id, 'client']);
    const byClients = (await inject({ method: 'GET', url: `/api/events?actor_type=client&actor_id=${client.id}`, headers: admin.auth })).json();
    assert.deepEqual(byClients.items.map((item: { type: string; actor_type: string }) => [item.type, item.actor_type]), [['reservation.created', 'client']]);
  });

  it('grants tokens by the client credentials grant (Basic or form), EdDSA-signed, for the scopes asked, verified through the JWKS', async () => {
    const client = await createClient(['reservations:write', 'variants:read']);
    const viaBasic = await token('grant_type=client_credentials&scope=variants:read', basic(client.id, client.secret));
    assert.equal(viaBasic.statusCode, 200, viaBasic.body);
    assert.equal(viaBasic.headers['cache-control'], 'no-store');
    const granted = viaBasic.json();
    assert.deepEqual({ token_type: granted.token_type, expires_in: granted.expires_in, scope: granted.scope }, { token_type: 'Bearer', expires_in: 900, scope: 'variants:read' });
    const [header, payload] = granted.access_token.split('.').slice(0, 2).map((part: string) => JSON.parse(Buffer.from(part, 'base64url').toString()));
    assert.equal(header.alg, 'EdDSA');
    assert.equal(header.typ, 'at+jwt');
    assert.ok(header.kid);
    assert.equal(payload.sub, client.id);
    assert.equal(payload.client_id, client.id);
    assert.equal(payload.scope, 'variants:read');
    assert.equal(payload.sid, undefined);
    assert.equal((await inject({ method: 'GET', url: '/api/variants', headers: bearer(granted.access_token) })).statusCode, 200);
    assert.equal(problemOf(await inject({ method: 'POST', url: '/api/reservations', headers: bearer(granted.access_token), payload: { lines: [{ variant_id: randomUUID(), quantity: 1 }] } })).code, 'insufficient_scope', 'only the scopes the token was granted');
    const viaForm = await token(`grant_type=client_credentials&client_id=${client.id}&client_secret=${client.secret}`);
    assert.equal(viaForm.json().scope, 'reservations:write variants:read', 'no scope asked: all the client holds');

    const base = await testApp.app.listen({ port: 0, host: '127.0.0.1' });
    const example = path.join(import.meta.dirname, '..', '..', 'docs', 'examples', 'verify-access-token.mjs');
    const { accessTokenVerifier } = await import(example);
    const verified = await accessTokenVerifier(base)(granted.access_token, { scope: 'variants:read' });
    assert.deepEqual(verified.scopes, ['variants:read']);
    assert.equal(verified.clientId, client.id);
    await assert.rejects(accessTokenVerifier(base)(granted.access_token, { scope: 'variants:write' }), /lacks the scope/);

    // A real OAuth client library (openid-client), over HTTP.
    const configuration = new oauth.Configuration({ issuer: testApp.config.jwtIssuer, token_endpoint: `${base}/api/oauth/token` }, client.id, client.secret);
    oauth.allowInsecureRequests(configuration);
    const fromLibrary = await oauth.clientCredentialsGrant(configuration, { scope: 'reservations:write' });
    assert.equal(fromLibrary.scope, 'reservations:write');
    const reply = await fetch(`${base}/api/reservations/${randomUUID()}`, { headers: bearer(fromLibrary.access_token) });
    assert.equal(reply.status, 404, 'the token is accepted; the reservation does not exist');
  });

  it('answers token errors in RFC 6749 §5.2 shape', async () => {
    const client = await createClient(['variants:read']);
    const expect = async (reply: Awaited<ReturnType<typeof token>>, status: number, error: string) => {
      assert.equal(reply.statusCode, status, reply.body);
      assert.match(String(reply.headers['content-type']), /^application\/json/);
      assert.equal(reply.json().error, error);
      assert.equal(typeof reply.json().error_description, 'string');
      return reply;
    };
    const wrongBasic = await expect(await token('grant_type=client_credentials', basic(client.id, `shop_sk_${'A'.repeat(43)}`)), 401, 'invalid_client');
    assert.match(String(wrongBasic.headers['www-authenticate']), /^Basic/);
    const wrongForm = await expect(await token(`grant_type=client_credentials&client_id=${client.id}&client_secret=nope`), 401, 'invalid_client');
    assert.equal(wrongForm.headers['www-authenticate'], undefined, 'no Basic challenge when Basic was not used');
    await expect(await token('grant_type=client_credentials'), 401, 'invalid_client');
    await expect(await token(`grant_type=client_credentials&client_id=${randomUUID()}&client_secret=${client.secret}`), 401, 'invalid_client');
    await expect(await token('grant_type=password', basic(client.id, client.secret)), 400, 'unsupported_grant_type');
    await expect(await token('scope=variants:read', basic(client.id, client.secret)), 400, 'invalid_request');
    await expect(await token('grant_type=client_credentials&scope=variants:write', basic(client.id, client.secret)), 400, 'invalid_scope');
    await expect(await token('grant_type=client_credentials&grant_type=client_credentials', basic(client.id, client.secret)), 400, 'invalid_request');
    await expect(await token(`grant_type=client_credentials&client_id=${client.id}&client_secret=${client.secret}`, basic(client.id, client.secret)), 400, 'invalid_request');
    await expect(await inject({ method: 'POST', url: '/api/oauth/token', headers: basic(client.id, client.secret), payload: { grant_type: 'client_credentials' } }), 400, 'invalid_request');
  });

  it('rolls a secret with overlap, expires or deletes secrets at once, and notes last use at most once a minute', async () => {
    const client = await createClient(['variants:read']);
    const first = client.secret;
    const rolled = await inject({ method: 'POST', url: `/api/clients/${client.id}/secrets`, headers: admin.auth });
    assert.equal(rolled.statusCode, 201);
    assert.equal(rolled.headers['cache-control'], 'no-store');
    const second = rolled.json();
    assert.deepEqual({ expires_at: second.expires_at, last_used_at: second.last_used_at }, { expires_at: null, last_used_at: null });
    const listed = (await inject({ method: 'GET', url: `/api/clients/${client.id}`, headers: admin.auth })).json().secrets;
    const old = listed.find((secret: { id: string }) => secret.id === client.secrets[0]!.id);
    const overlap = new Date(old.expires_at).getTime() - Date.now();
    assert.ok(overlap > 86_300_000 && overlap <= 86_400_000, 'the old secret works a day more');
    assert.equal((await inject({ method: 'GET', url: '/api/variants', headers: bearer(first) })).statusCode, 200, 'both work during the overlap');
    assert.equal((await inject({ method: 'GET', url: '/api/variants', headers: bearer(second.secret) })).statusCode, 200);
    const third = (await inject({ method: 'POST', url: `/api/clients/${client.id}/secrets`, headers: { ...admin.auth, 'content-type': 'application/json' }, payload: { expire_others_in: 0 } })).json();
    assert.equal(problemOf(await inject({ method: 'GET', url: '/api/variants', headers: bearer(second.secret) })).code, 'invalid_token', 'expire_others_in: 0 stops the others at once');
    assert.equal(problemOf(await inject({ method: 'GET', url: '/api/variants', headers: bearer(first) })).code, 'invalid_token');
    const gotToken = (await token('grant_type=client_credentials', basic(client.id, third.secret))).json().access_token;
    assert.equal((await inject({ method: 'DELETE', url: `/api/clients/${client.id}/secrets/${third.id}`, headers: admin.auth })).statusCode, 204);
    assert.equal(problemOf(await inject({ method: 'GET', url: '/api/variants', headers: bearer(third.secret) })).code, 'invalid_token', 'a deleted secret stops at once');
    assert.equal((await token('grant_type=client_credentials', basic(client.id, third.secret))).statusCode, 401);
    assert.equal((await inject({ method: 'GET', url: '/api/variants', headers: bearer(gotToken) })).statusCode, 200, 'a token obtained with it lives until it expires');
    assert.equal((await inject({ method: 'DELETE', url: `/api/clients/${client.id}/secrets/${third.id}`, headers: admin.auth })).statusCode, 404);
    const types = (await testApp.db.selectFrom('events').select('type').where('subject_id', '=', client.id).orderBy('created_at').execute()).map((event) => event.type);
    assert.deepEqual(types, ['client.created', 'client.secret_created', 'client.secret_created', 'client.secret_deleted']);

    const fresh = await createClient(['variants:read']);
    const lastUsed = async () => (await testApp.db.selectFrom('api_clients').select('last_used_at').where('id', '=', fresh.id).executeTakeFirstOrThrow()).last_used_at;
    await inject({ method: 'GET', url: '/api/variants', headers: bearer(fresh.secret) });
    const noted = await eventuallyNoted(lastUsed);
    for (let request = 0; request < 4; request++) await inject({ method: 'GET', url: '/api/variants', headers: bearer(fresh.secret) });
    assert.equal((await lastUsed())!.getTime(), noted.getTime(), 'within the minute nothing more is written');
  });

  it('refuses a disabled client (enabled again, its earlier tokens stay refused), a deleted one, and a scope taken away, on the very next request', async () => {
    const client = await createClient(['variants:read', 'inventory:read']);
    const tokenBefore = (await token('grant_type=client_credentials', basic(client.id, client.secret))).json().access_token;
    const patch = (payload: object) => inject({ method: 'PATCH', url: `/api/clients/${client.id}`, headers: { ...admin.auth, 'content-type': 'application/merge-patch+json' }, payload: JSON.stringify(payload) });
    assert.equal((await patch({ scopes: ['inventory:read'] })).statusCode, 200);
    assert.equal(problemOf(await inject({ method: 'GET', url: '/api/variants', headers: bearer(client.secret) })).code, 'insufficient_scope');
    assert.equal(problemOf(await inject({ method: 'GET', url: '/api/variants', headers: bearer(tokenBefore) })).code, 'insufficient_scope', "the token's scopes and the client's, both");
    assert.equal((await patch({ scopes: ['variants:read', 'inventory:read'], status: 'disabled' })).json().status, 'disabled');
    assert.equal(problemOf(await inject({ method: 'GET', url: '/api/variants', headers: bearer(client.secret) })).code, 'invalid_token');
    assert.equal(problemOf(await inject({ method: 'GET', url: '/api/variants', headers: bearer(tokenBefore) })).code, 'invalid_token');
    assert.equal((await token('grant_type=client_credentials', basic(client.id, client.secret))).statusCode, 401);
    await patch({ status: 'active' });
    assert.equal((await inject({ method: 'GET', url: '/api/variants', headers: bearer(client.secret) })).statusCode, 200);
    assert.equal(problemOf(await inject({ method: 'GET', url: '/api/variants', headers: bearer(tokenBefore) })).code, 'invalid_token', 'tokens issued before it was disabled stay refused');
    // A token issued after the client was enabled again works at once (API.md section 17).
    const tokenAfter = (await token('grant_type=client_credentials', basic(client.id, client.secret))).json().access_token as string;
    assert.equal((await inject({ method: 'GET', url: '/api/variants', headers: bearer(tokenAfter) })).statusCode, 200);
    const version = (await inject({ method: 'GET', url: `/api/clients/${client.id}`, headers: admin.auth })).json().version;
    assert.equal((await inject({ method: 'DELETE', url: `/api/clients/${client.id}`, headers: { ...admin.auth, 'if-match': '"1"' } })).statusCode, 412);
    assert.equal((await inject({ method: 'DELETE', url: `/api/clients/${client.id}`, headers: { ...admin.auth, 'if-match': `"${version}"` } })).statusCode, 204);
    assert.equal(problemOf(await inject({ method: 'GET', url: '/api/variants', headers: bearer(client.secret) })).code, 'invalid_token');
    assert.equal(problemOf(await inject({ method: 'GET', url: '/api/variants', headers: bearer(tokenAfter) })).code, 'invalid_token');
    assert.equal((await inject({ method: 'GET', url: `/api/clients/${client.id}`, headers: admin.auth })).statusCode, 404);
  });

  it('takes a token issued after the client is enabled again at once, even in the second it was disabled in; those issued before stay refused (API.md section 17)', async () => {
    const client = await createClient(['variants:read']);
    const patch = (payload: object) => inject({ method: 'PATCH', url: `/api/clients/${client.id}`, headers: admin.auth, payload });
    const grant = async () => (await token('grant_type=client_credentials', basic(client.id, client.secret))).json().access_token as string;
    const use = async (accessToken: string) => inject({ method: 'GET', url: '/api/variants', headers: bearer(accessToken) });
    const refusedTokens: string[] = [];
    // No sleep: each round runs well within one second. A round that crossed a second boundary
    // proves nothing about "the same second" and is run again.
    let sameSecondRounds = 0;
    for (let round = 0; round < 5 && sameSecondRounds < 2; round++) {
      const issuedBefore = await grant();
      assert.equal((await use(issuedBefore)).statusCode, 200);
      refusedTokens.push(issuedBefore);
      const start = Date.now();
      assert.equal((await patch({ status: 'disabled' })).json().status, 'disabled');
      assert.equal((await patch({ status: 'active' })).json().status, 'active');
      const issuedAfter = await grant();
      const reply = await use(issuedAfter);
      const end = Date.now();
      if (Math.floor(start / 1000) !== Math.floor(end / 1000)) continue;
      sameSecondRounds++;
      assert.equal(reply.statusCode, 200, 'a token issued after the client was enabled again works at once, in the second of the disabling');
      for (const earlier of refusedTokens) assert.equal(problemOf(await use(earlier)).code, 'invalid_token', 'every token issued before a disabling stays refused');
    }
    assert.ok(sameSecondRounds > 0, 'at least one round ran within one second');
    // The database decides: a token issued now works, then not after the next disabling, even re-enabled.
    const latest = await grant();
    assert.equal((await use(latest)).statusCode, 200);
    await patch({ status: 'disabled' });
    await patch({ status: 'active' });
    assert.equal(problemOf(await use(latest)).code, 'invalid_token');
    assert.equal((await use(await grant())).statusCode, 200);
  });

  it('counts a client against its own rate limit, and a wrong secret against the address', async () => {
    const client = await createClient(['variants:read'], { rate_limit: 3 });
    const statuses = [];
    for (let request = 0; request < 4; request++) statuses.push((await inject({ method: 'GET', url: '/api/variants', headers: bearer(client.secret), remoteAddress: `10.7.0.${request}` })).statusCode);
    assert.deepEqual(statuses, [200, 200, 200, 429], 'its own budget, from whatever address');
    const guarded = await buildTestApp({ environment: { API_RATE_LIMIT: '3' } });
    try {
      const guesses = [];
      for (let guess = 0; guess < 4; guess++) {
        guesses.push((await guarded.app.inject({ method: 'GET', url: '/api/variants', headers: bearer(`shop_sk_${randomUUID().replace(/-/g, '')}${'B'.repeat(11)}`), remoteAddress: '10.8.0.1' })).statusCode);
      }
      assert.deepEqual(guesses, [401, 401, 401, 429], 'wrong secrets spend the address budget');
    } finally {
      await guarded.close();
    }
  });

  it('is for admins, and for users only', async () => {
    const manager = await createUser(testApp.app, { role: 'manager', admin });
    assert.equal(problemOf(await inject({ method: 'POST', url: '/api/clients', headers: manager.auth, payload: { name: 'x', scopes: ['variants:read'] } })).code, 'forbidden');
    const client = await createClient(['variants:read', 'users:read']);
    assert.equal(problemOf(await inject({ method: 'POST', url: '/api/clients', headers: bearer(client.secret), payload: { name: 'x', scopes: ['variants:read'] } })).code, 'forbidden');
  });

  it('keeps a secret out of every log line, whether sent as a bearer token or to the token endpoint', async () => {
    const logLines: string[] = [];
    const logged = await buildTestApp({ logLines });
    try {
      const owner = await loginAdmin(logged.app);
      const created = (await logged.app.inject({ method: 'POST', url: '/api/clients', headers: owner.auth, payload: { name: 'Logged', scopes: ['variants:read'] } })).json();
      await logged.app.inject({ method: 'GET', url: '/api/variants', headers: bearer(created.secret) });
      await logged.app.inject({ method: 'POST', url: '/api/oauth/token', headers: FORM, payload: `grant_type=client_credentials&client_id=${created.id}&client_secret=${created.secret}` });
      await logged.app.inject({ method: 'POST', url: '/api/oauth/token', headers: { ...FORM, ...basic(created.id, created.secret) }, payload: 'grant_type=client_credentials' });
      assert.ok(logLines.length > 3);
      assert.ok(!logLines.join('\n').includes(created.secret.slice(12)), 'no log line carries the secret');
    } finally {
      await logged.close();
    }
  });

  it('publishes its metadata (RFC 8414)', async () => {
    const metadata = (await inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })).json();
    assert.equal(metadata.issuer, testApp.config.jwtIssuer);
    assert.equal(metadata.token_endpoint, `${testApp.config.publicUrl}/api/oauth/token`);
    assert.equal(metadata.jwks_uri, `${testApp.config.publicUrl}/.well-known/jwks.json`);
    // The issuer is http on a loopback host: the authorization server of section 18 is on, and the document has its grants
    // (test/oauth/discovery.test.ts has the rest, and v3's document while it is off).
    assert.deepEqual(metadata.grant_types_supported, ['authorization_code', 'refresh_token', 'client_credentials']);
    assert.deepEqual(metadata.token_endpoint_auth_methods_supported, ['client_secret_basic', 'client_secret_post', 'none']);
    assert.ok(metadata.scopes_supported.includes('reservations:write'));
    assert.deepEqual(metadata.response_types_supported, ['code']);
  });
});

async function eventuallyNoted(read: () => Promise<Date | null>): Promise<Date> {
  for (const deadline = Date.now() + 5000; Date.now() < deadline; ) {
    const noted = await read();
    if (noted) return noted;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('the use was never noted');
}

describe('API clients on two instances (PostgreSQL)', { skip: !onPostgres && 'needs PostgreSQL' }, () => {
  const fixture = useTwoInstancesWithAdmin();

  it('refuses on the very next request, on the other instance, a disabled client, a deleted secret and a scope taken away, tokens included', async () => {
    const [first, second] = [fixture.first.app, fixture.second.app];
    const created = (await first.inject({ method: 'POST', url: '/api/clients', headers: fixture.admin.auth, payload: { name: 'Twin', scopes: ['variants:read', 'inventory:read'] } })).json();
    const issued = (await second.inject({ method: 'POST', url: '/api/oauth/token', headers: { ...FORM, ...basic(created.id, created.secret) }, payload: 'grant_type=client_credentials' })).json().access_token;
    for (const credential of [created.secret, issued]) assert.equal((await second.inject({ method: 'GET', url: '/api/variants', headers: bearer(credential) })).statusCode, 200);
    const patch = (payload: object) => first.inject({ method: 'PATCH', url: `/api/clients/${created.id}`, headers: fixture.admin.auth, payload });
    await patch({ scopes: ['inventory:read'] });
    for (const credential of [created.secret, issued]) assert.equal(problemOf(await second.inject({ method: 'GET', url: '/api/variants', headers: bearer(credential) })).code, 'insufficient_scope');
    await patch({ scopes: ['variants:read'], status: 'disabled' });
    for (const credential of [created.secret, issued]) assert.equal(problemOf(await second.inject({ method: 'GET', url: '/api/variants', headers: bearer(credential) })).code, 'invalid_token');
    await patch({ status: 'active' });
    assert.equal((await second.inject({ method: 'GET', url: '/api/variants', headers: bearer(created.secret) })).statusCode, 200);
    // Enabled again on one instance, a token issued on the other works at once on both; the earlier one on neither.
    const reissued = (await second.inject({ method: 'POST', url: '/api/oauth/token', headers: { ...FORM, ...basic(created.id, created.secret) }, payload: 'grant_type=client_credentials' })).json().access_token;
    for (const instance of [first, second]) {
      assert.equal((await instance.inject({ method: 'GET', url: '/api/variants', headers: bearer(reissued) })).statusCode, 200);
      assert.equal(problemOf(await instance.inject({ method: 'GET', url: '/api/variants', headers: bearer(issued) })).code, 'invalid_token');
    }
    await first.inject({ method: 'DELETE', url: `/api/clients/${created.id}/secrets/${created.secrets[0].id}`, headers: fixture.admin.auth });
    assert.equal(problemOf(await second.inject({ method: 'GET', url: '/api/variants', headers: bearer(created.secret) })).code, 'invalid_token');
  });
});
