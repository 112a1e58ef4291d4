import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { sql } from 'kysely';
import { inTransaction } from '../../src/db/transaction.js';
import { SERVICE_CONTEXT } from '../../src/events/event-recorder.js';
import { linkIdentity } from '../../src/federation/identity-service.js';
import { createUser, problemOf, useAppWithAdmin, type Session } from '../helpers/test-app.js';
import { startUpstreamProvider, type UpstreamProvider } from '../helpers/upstream-provider.js';
import { enrolTotp } from '../mfa/mfa-helpers.js';

const MERGE_PATCH = { 'content-type': 'application/merge-patch+json' };
const SECRET = 'upstream-client-secret-of-the-shop';
const ENCRYPTION_KEY = randomBytes(32).toString('base64');
const appleKey = () => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();

/** A loopback server that answers every request with what `answer` gives: a document that is no provider's. */
async function documentServer(answer: (url: string) => { status: number; type: string; body: string }) {
  const server = http.createServer((request, response) => {
    const { status, type, body } = answer(request.url ?? '/');
    response.writeHead(status, { 'content-type': type }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, stop: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** A loopback port nobody listens on (one just let go). */
async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** API.md section 20, its first slice: the providers' admin API and the discovery check, against oidc-provider. */
describe('identity providers', () => {
  const fixture = useAppWithAdmin({ environment: { SIGNING_KEY_ENCRYPTION_KEY: ENCRYPTION_KEY } });
  let upstream: UpstreamProvider;
  before(async () => {
    upstream = await startUpstreamProvider({
      client: { client_id: 'shop', client_secret: SECRET, redirect_uris: ['http://127.0.0.1:3000/oauth/callback/any'] },
      accounts: [{ sub: 'ada-at-upstream', email: 'ada@example.com', email_verified: true }],
    });
  });
  after(() => upstream?.stop());

  const asAdmin = (request: InjectOptions) => fixture.app.inject({ ...request, headers: { ...fixture.admin.auth, ...request.headers } });
  const body = (extra: Record<string, unknown> = {}) => ({ name: 'Upstream', issuer: upstream.issuer, client_id: 'shop', client_secret: SECRET, button_label: 'Sign in with Upstream', ...extra });
  const create = async (extra: Record<string, unknown> = {}) => {
    const created = await asAdmin({ method: 'POST', url: '/api/identity-providers', payload: body(extra) });
    assert.equal(created.statusCode, 201, created.body);
    return created.json() as { id: string; version: number; scopes: string[] };
  };
  const stored = (id: string) => fixture.db.selectFrom('identity_providers').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const eventsOf = (id: string) => fixture.db.selectFrom('events').selectAll().where('subject_id', '=', id).orderBy('created_at').orderBy('id').execute();
  const refusedAs = (response: Awaited<ReturnType<typeof asAdmin>>, code: string) => {
    assert.equal(response.statusCode, 400, response.body);
    const problem = problemOf(response);
    assert.equal(problem.code, code);
    return problem;
  };

  it('connects a provider against the live upstream: 201, Location, ETag, the defaults, its discovery document kept, and identity_provider.created', async () => {
    const created = await asAdmin({ method: 'POST', url: '/api/identity-providers', payload: body() });
    assert.equal(created.statusCode, 201, created.body);
    const provider = created.json();
    assert.equal(created.headers.location, `/api/identity-providers/${provider.id}`);
    assert.equal(created.headers.etag, '"1"');
    assert.deepEqual({ ...provider, id: undefined, created_at: undefined, updated_at: undefined }, {
      id: undefined,
      name: 'Upstream',
      issuer: upstream.issuer,
      client_id: 'shop',
      scopes: ['openid', 'email', 'profile'],
      button_label: 'Sign in with Upstream',
      link_by_verified_email: false,
      enabled: true,
      apple_team_id: null,
      apple_key_id: null,
      version: 1,
      created_at: undefined,
      updated_at: undefined,
    });
    const row = await stored(provider.id);
    assert.equal(row.discovery.issuer, upstream.issuer);
    assert.equal(row.discovery.authorization_endpoint, `${upstream.issuer}/auth`);
    assert.ok((row.discovery.response_types_supported as string[]).includes('code'));
    assert.ok(row.client_secret?.startsWith('aes256gcm:'), 'the secret is sealed at rest');
    assert.ok(!row.client_secret!.includes(SECRET));
    const [event, ...others] = await eventsOf(provider.id);
    assert.equal(others.length, 0);
    assert.equal(event?.type, 'identity_provider.created');
    assert.equal(event?.subject_type, 'identity_provider');
    assert.equal(event?.actor_id, fixture.admin.id);
    assert.deepEqual((event?.data as { after: Record<string, unknown> }).after.scopes, ['openid', 'email', 'profile']);
    assert.ok(!JSON.stringify(event).includes(SECRET), 'no secret in the event');
  });

  it('reads one (ETag, If-None-Match 304), lists them by name, and never shows a secret', async () => {
    const provider = await create({ name: 'aaa first' });
    const url = `/api/identity-providers/${provider.id.toUpperCase()}`;
    const read = await asAdmin({ method: 'GET', url });
    assert.equal(read.statusCode, 200);
    assert.equal(read.headers.etag, '"1"');
    assert.equal((await asAdmin({ method: 'GET', url, headers: { 'if-none-match': '"1"' } })).statusCode, 304);
    assert.equal((await asAdmin({ method: 'GET', url, headers: { 'if-none-match': '"2"' } })).statusCode, 200);
    assert.equal(problemOf(await asAdmin({ method: 'GET', url: `/api/identity-providers/${randomUUID()}` })).code, 'not_found');
    assert.equal(problemOf(await asAdmin({ method: 'GET', url: '/api/identity-providers/nope' })).code, 'invalid_parameter');
    const listed = await asAdmin({ method: 'GET', url: '/api/identity-providers' });
    assert.equal(listed.statusCode, 200);
    const names = listed.json().items.map((item: { name: string }) => item.name);
    assert.deepEqual(names, [...names].sort((a: string, b: string) => a.toLowerCase().localeCompare(b.toLowerCase())));
    for (const text of [read.body, listed.body]) {
      assert.ok(!text.includes(SECRET) && !text.includes('client_secret') && !text.includes('apple_private_key') && !text.includes('discovery'), text);
    }
  });

  it('keeps openid in the scopes, once, and takes the other settings as given', async () => {
    const provider = await create({ scopes: ['email', 'email', 'offline_access'], link_by_verified_email: true, enabled: false });
    assert.deepEqual(provider.scopes, ['openid', 'email', 'offline_access']);
    const row = await stored(provider.id);
    assert.equal(row.link_by_verified_email, true);
    assert.equal(row.enabled, false);
  });

  it('refuses an issuer that is not https (http only on a loopback host) and shapes that break the schema, recording nothing', async () => {
    const before = await fixture.db.selectFrom('events').select(sql<number>`count(*)::int`.as('count')).where('subject_type', '=', 'identity_provider').executeTakeFirstOrThrow();
    for (const issuer of ['http://accounts.example.com', 'ftp://127.0.0.1/x', 'not a url', 'https://issuer.example.com/?tenant=1']) {
      const problem = refusedAs(await asAdmin({ method: 'POST', url: '/api/identity-providers', payload: body({ issuer }) }), 'invalid_provider');
      assert.equal(problem.errors?.[0]?.path, '/issuer', issuer);
    }
    refusedAs(await asAdmin({ method: 'POST', url: '/api/identity-providers', payload: { ...body(), name: undefined } }), 'validation_failed');
    refusedAs(await asAdmin({ method: 'POST', url: '/api/identity-providers', payload: body({ scopes: ['has space'] }) }), 'validation_failed');
    refusedAs(await asAdmin({ method: 'POST', url: '/api/identity-providers', payload: body({ unknown: 1 }) }), 'validation_failed');
    const after = await fixture.db.selectFrom('events').select(sql<number>`count(*)::int`.as('count')).where('subject_type', '=', 'identity_provider').executeTakeFirstOrThrow();
    assert.equal(after.count, before.count);
  });

  it('refuses with invalid_provider, naming what failed: unreachable, not JSON, an issuer that differs, no code flow', async () => {
    const port = await closedPort();
    const html = await documentServer(() => ({ status: 200, type: 'text/html', body: '<html>not a provider</html>' }));
    const emptyJson = await documentServer(() => ({ status: 200, type: 'application/json', body: '' }));
    const implicitOnly = await documentServer((url) => ({
      status: url.endsWith('/.well-known/openid-configuration') ? 200 : 404,
      type: 'application/json',
      body: JSON.stringify({ issuer: implicitOnlyIssuer, authorization_endpoint: `${implicitOnlyIssuer}/auth`, token_endpoint: `${implicitOnlyIssuer}/token`, jwks_uri: `${implicitOnlyIssuer}/jwks`, response_types_supported: ['id_token'] }),
    }));
    const implicitOnlyIssuer = implicitOnly.origin;
    // A document whose authorization endpoint is a script URL: the console would send a browser there.
    const scriptEndpoint = await documentServer((url) => ({
      status: url.endsWith('/.well-known/openid-configuration') ? 200 : 404,
      type: 'application/json',
      body: JSON.stringify({ issuer: scriptEndpointIssuer, authorization_endpoint: 'javascript:alert(1)', token_endpoint: `${scriptEndpointIssuer}/token`, jwks_uri: `${scriptEndpointIssuer}/jwks`, response_types_supported: ['code'] }),
    }));
    const scriptEndpointIssuer = scriptEndpoint.origin;
    try {
      const cases = [
        [`http://127.0.0.1:${port}`, /unreachable/],
        [`${upstream.issuer}/no/such/tenant`, /unreachable/],
        [html.origin, /not JSON/],
        [emptyJson.origin, /not JSON/],
        [upstream.otherIssuer, /another issuer/],
        [implicitOnly.origin, /no authorization code flow/],
        [scriptEndpoint.origin, /authorization_endpoint is not an https URL/],
      ] as const;
      for (const [issuer, message] of cases) {
        const problem = refusedAs(await asAdmin({ method: 'POST', url: '/api/identity-providers', payload: body({ issuer }) }), 'invalid_provider');
        assert.match(problem.errors?.[0]?.message ?? '', message, `${issuer}: ${problem.detail}`);
        assert.match(problem.detail, message);
      }
    } finally {
      await Promise.all([html.stop(), emptyJson.stop(), implicitOnly.stop(), scriptEndpoint.stop()]);
    }
    const made = await fixture.db.selectFrom('identity_providers').select('issuer').where('issuer', '=', upstream.otherIssuer).execute();
    assert.equal(made.length, 0);
  });

  it('changes a provider with a merge patch under If-Match (412 when stale), reads a new issuer again, and records identity_provider.updated without a secret', async () => {
    const provider = await create();
    const url = `/api/identity-providers/${provider.id}`;
    const stale = await asAdmin({ method: 'PATCH', url, headers: { ...MERGE_PATCH, 'if-match': '"7"' }, payload: { enabled: false } });
    assert.equal(stale.statusCode, 412);
    assert.equal(problemOf(stale).code, 'precondition_failed');
    const patched = await asAdmin({ method: 'PATCH', url, headers: { ...MERGE_PATCH, 'if-match': '"1"' }, payload: { enabled: false, scopes: ['email'], client_secret: 'a-rotated-secret' } });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.equal(patched.headers.etag, '"2"');
    assert.equal(patched.json().enabled, false);
    assert.deepEqual(patched.json().scopes, ['openid', 'email']);
    assert.ok(!patched.body.includes('a-rotated-secret'));
    const unchanged = await asAdmin({ method: 'PATCH', url, headers: MERGE_PATCH, payload: { enabled: false } });
    assert.equal(unchanged.json().version, 2, 'a patch to the values it has writes nothing');
    // An issuer that fails its check changes nothing.
    const wrongIssuer = await asAdmin({ method: 'PATCH', url, headers: MERGE_PATCH, payload: { issuer: upstream.otherIssuer } });
    refusedAs(wrongIssuer, 'invalid_provider');
    assert.equal((await stored(provider.id)).version, 2);
    // Sending the issuer it has reads the document again, without a write.
    await fixture.db.updateTable('identity_providers').set({ discovery: JSON.stringify({ stale: true }) }).where('id', '=', provider.id).execute();
    const reread = await asAdmin({ method: 'PATCH', url, headers: MERGE_PATCH, payload: { issuer: upstream.issuer } });
    assert.equal(reread.statusCode, 200, reread.body);
    assert.equal(reread.json().version, 2);
    assert.equal((await stored(provider.id)).discovery.issuer, upstream.issuer);

    const events = await eventsOf(provider.id);
    assert.deepEqual(events.map((event) => event.type), ['identity_provider.created', 'identity_provider.updated']);
    assert.deepEqual(events[1]!.data, {
      before: { scopes: ['openid', 'email', 'profile'], enabled: true },
      after: { scopes: ['openid', 'email'], enabled: false },
      credentials_changed: true,
    });
    assert.ok(!JSON.stringify(events).includes('a-rotated-secret'));
    refusedAs(await asAdmin({ method: 'PATCH', url, headers: MERGE_PATCH, payload: { name: null } }), 'validation_failed');
    assert.equal((await asAdmin({ method: 'PATCH', url: `/api/identity-providers/${randomUUID()}`, headers: MERGE_PATCH, payload: { enabled: true } })).statusCode, 404);
  });

  it('takes Apple\'s key in place of a client secret, exactly one credential, and a key that is P-256 only', async () => {
    const apple = { client_secret: undefined, apple_team_id: 'TEAM123456', apple_key_id: 'KEY1234567', apple_private_key: appleKey() };
    const provider = await create(apple);
    const row = await stored(provider.id);
    assert.equal(row.client_secret, null);
    assert.ok(row.apple_private_key?.startsWith('aes256gcm:'));
    const read = await asAdmin({ method: 'GET', url: `/api/identity-providers/${provider.id}` });
    assert.equal(read.json().apple_team_id, 'TEAM123456');
    assert.equal(read.json().apple_key_id, 'KEY1234567');
    assert.ok(!read.body.includes('PRIVATE KEY'));

    const fieldsOf = (response: Awaited<ReturnType<typeof asAdmin>>) => refusedAs(response, 'validation_failed').errors?.map((error) => error.path).sort();
    const post = (extra: Record<string, unknown>) => asAdmin({ method: 'POST', url: '/api/identity-providers', payload: body(extra) });
    assert.deepEqual(fieldsOf(await post({ client_secret: undefined })), ['/client_secret']);
    assert.deepEqual(fieldsOf(await post(apple).then(() => post({ ...apple, client_secret: SECRET }))), ['/client_secret']);
    assert.deepEqual(fieldsOf(await post({ ...apple, apple_key_id: undefined })), ['/apple_key_id']);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    for (const key of [rsa, p384, 'not a key']) assert.deepEqual(fieldsOf(await post({ ...apple, apple_private_key: key })), ['/apple_private_key']);

    // A patch may switch the credential, but must leave exactly one.
    const url = `/api/identity-providers/${provider.id}`;
    assert.deepEqual(fieldsOf(await asAdmin({ method: 'PATCH', url, headers: MERGE_PATCH, payload: { client_secret: SECRET } })), ['/client_secret']);
    const switched = await asAdmin({ method: 'PATCH', url, headers: MERGE_PATCH, payload: { client_secret: SECRET, apple_team_id: null, apple_key_id: null, apple_private_key: null } });
    assert.equal(switched.statusCode, 200, switched.body);
    assert.equal(switched.json().apple_team_id, null);
    const after = await stored(provider.id);
    assert.equal(after.apple_private_key, null);
    assert.ok(after.client_secret?.startsWith('aes256gcm:'));
  });

  it('deletes a provider under If-Match, with every identity linked through it, and records identity_provider.deleted', async () => {
    const provider = await create();
    const customer = await createUser(fixture.app);
    const other = await create({ name: 'Another' });
    await inTransaction(fixture.db, async (trx) => {
      await linkIdentity(trx, { userId: customer.id, providerId: provider.id, subject: 'sub-1', email: customer.email, usedNow: true }, SERVICE_CONTEXT);
      await linkIdentity(trx, { userId: customer.id, providerId: other.id, subject: 'sub-1', email: null, usedNow: false }, SERVICE_CONTEXT);
    });
    const url = `/api/identity-providers/${provider.id}`;
    assert.equal((await asAdmin({ method: 'DELETE', url, headers: { 'if-match': '"3"' } })).statusCode, 412);
    const deleted = await asAdmin({ method: 'DELETE', url, headers: { 'if-match': '"1"' } });
    assert.equal(deleted.statusCode, 204, deleted.body);
    assert.equal((await asAdmin({ method: 'GET', url })).statusCode, 404);
    assert.equal((await asAdmin({ method: 'DELETE', url })).statusCode, 404);
    const left = await fixture.db.selectFrom('user_identities').select('provider_id').where('user_id', '=', customer.id).execute();
    assert.deepEqual(left.map((identity) => identity.provider_id), [other.id]);
    const events = await eventsOf(provider.id);
    assert.equal(events.at(-1)?.type, 'identity_provider.deleted');
    assert.equal((events.at(-1)?.data as { identities_removed: number }).identities_removed, 1);
  });

  describe('who may call', () => {
    let manager: Session;
    let customer: Session;
    let providerId: string;
    before(async () => {
      manager = await createUser(fixture.app, { role: 'manager' });
      customer = await createUser(fixture.app);
      providerId = (await create({ name: 'Guarded' })).id;
    });
    const routes = () =>
      [
        { method: 'GET', url: '/api/identity-providers' },
        { method: 'POST', url: '/api/identity-providers', payload: body() },
        { method: 'GET', url: `/api/identity-providers/${providerId}` },
        { method: 'PATCH', url: `/api/identity-providers/${providerId}`, payload: { enabled: false } },
        { method: 'DELETE', url: `/api/identity-providers/${providerId}` },
      ] as const;

    it('refuses managers and users (403 forbidden) and API clients, whatever their scopes (users only)', async () => {
      const client = await asAdmin({ method: 'POST', url: '/api/clients', payload: { name: 'Back office', scopes: ['users:read', 'users:write', 'events:read'] } });
      assert.equal(client.statusCode, 201, client.body);
      const callers = [manager.auth, customer.auth, { authorization: `Bearer ${client.json().secret}` }];
      for (const headers of callers) {
        for (const route of routes()) {
          const refused = await fixture.app.inject({ ...route, headers });
          assert.equal(refused.statusCode, 403, `${route.method} ${route.url}: ${refused.body}`);
          assert.equal(problemOf(refused).code, 'forbidden');
        }
      }
      assert.equal((await fixture.app.inject({ method: 'GET', url: '/api/identity-providers' })).statusCode, 401);
      assert.equal((await stored(providerId)).version, 1, 'nothing changed');
    });

    it('asks an admin with a second factor for a fresh one before each change, not before a read', async () => {
      const admin = await createUser(fixture.app, { role: 'admin' });
      await enrolTotp(fixture.app, admin);
      await sql`update sessions set mfa_verified_at = now() - interval '1000 seconds' where user_id = ${admin.id}`.execute(fixture.db);
      for (const route of routes()) {
        const answered = await fixture.app.inject({ ...route, headers: admin.auth });
        if (route.method === 'GET') assert.equal(answered.statusCode, 200, `${route.method} ${route.url}`);
        else {
          assert.equal(answered.statusCode, 403, `${route.method} ${route.url}: ${answered.body}`);
          assert.equal(problemOf(answered).code, 'step_up_required');
        }
      }
    });
  });
});
