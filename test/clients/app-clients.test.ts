import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { sql, type Migration } from 'kysely';
import { openDatabase } from '../../src/db/database.js';
import { runMigrations } from '../../src/db/migrate.js';
import { createScratchDatabase, newVariantBody, onPostgres, poolMode, problemOf, useAppWithAdmin } from '../helpers/test-app.js';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });
const basic = (id: string, secret: string) => ({ authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` });
const CALLBACK = 'https://shop.example.com/callback';
const EMPTY_APP_FIELDS = { redirect_uris: [], post_logout_redirect_uris: [], first_party: false, logo_uri: null, id_token_signed_response_alg: null };

/** API.md section 18, "Apps": an API client gains a type; apps have redirect URIs and sign users in. */
describe('API clients of each type (apps)', () => {
  const fixture = useAppWithAdmin();
  const inject = (request: InjectOptions) => fixture.app.inject(request);
  const create = (payload: Record<string, unknown>) => inject({ method: 'POST', url: '/api/clients', headers: fixture.admin.auth, payload: { name: 'Shop app', ...payload } });
  const createOk = async (payload: Record<string, unknown>) => {
    const created = await create(payload);
    assert.equal(created.statusCode, 201, created.body);
    return created.json();
  };
  const patch = (id: string, payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
    inject({ method: 'PATCH', url: `/api/clients/${id}`, headers: { ...fixture.admin.auth, 'content-type': 'application/merge-patch+json', ...headers }, payload: JSON.stringify(payload) });
  const storedRow = (id: string) => fixture.db.selectFrom('api_clients').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const secretRows = (id: string) => fixture.db.selectFrom('api_client_secrets').selectAll().where('client_id', '=', id).execute();
  const eventsOf = (id: string) => fixture.db.selectFrom('events').selectAll().where('subject_id', '=', id).orderBy('created_at').orderBy('id').execute();
  const clientCount = async () => Number((await fixture.db.selectFrom('api_clients').select((eb) => eb.fn.countAll().as('count')).executeTakeFirstOrThrow()).count);
  const token = (payload: string, headers: Record<string, string> = {}) => inject({ method: 'POST', url: '/api/oauth/token', headers: { ...FORM, ...headers }, payload });

  /** A body refused with 400 `validation_failed`: its field problems, and nothing stored. */
  const refusedCreate = async (payload: Record<string, unknown>) => {
    const before = await clientCount();
    const reply = await create(payload);
    assert.equal(reply.statusCode, 400, `${JSON.stringify(payload)}: ${reply.body}`);
    const problem = problemOf(reply);
    assert.equal(problem.code, 'validation_failed');
    assert.equal(await clientCount(), before, 'nothing stored');
    return problem.errors ?? [];
  };

  it('creates a service client by default, in the v3 shape with the app fields at their empty values', async () => {
    const created = await createOk({ name: 'Checkout', scopes: ['variants:read'] });
    assert.match(created.secret, /^shop_sk_[A-Za-z0-9_-]{43}$/);
    assert.equal(created.type, 'service');
    assert.deepEqual(
      { redirect_uris: created.redirect_uris, post_logout_redirect_uris: created.post_logout_redirect_uris, first_party: created.first_party, logo_uri: created.logo_uri, id_token_signed_response_alg: created.id_token_signed_response_alg },
      EMPTY_APP_FIELDS,
    );
    assert.equal(created.secrets.length, 1);
    const read = (await inject({ method: 'GET', url: `/api/clients/${created.id}`, headers: fixture.admin.auth })).json();
    const { secret: _secret, ...shown } = created;
    assert.deepEqual(read, shown, 'the reply of a read is the creation without its secret');
    assert.equal((await storedRow(created.id)).type, 'service');
    const [event] = await eventsOf(created.id);
    assert.deepEqual(event!.data, {
      after: { name: 'Checkout', description: null, type: 'service', scopes: ['variants:read'], status: 'active', rate_limit: null, ...EMPTY_APP_FIELDS },
      first_key: { id: created.secrets[0].id, prefix: created.secrets[0].prefix },
    });
  });

  it('creates a confidential app with a secret, and the defaults of every app field', async () => {
    const created = await createOk({ type: 'confidential', scopes: ['openid', 'email', 'variants:read'], redirect_uris: [CALLBACK] });
    assert.match(created.secret, /^shop_sk_/);
    assert.equal(created.type, 'confidential');
    assert.deepEqual(created.redirect_uris, [CALLBACK]);
    assert.deepEqual(created.post_logout_redirect_uris, []);
    assert.equal(created.first_party, false);
    assert.equal(created.logo_uri, null);
    assert.equal(created.id_token_signed_response_alg, 'RS256');
    assert.deepEqual(created.scopes, ['openid', 'email', 'variants:read']);
    assert.equal((await secretRows(created.id)).length, 1);
    const stored = await storedRow(created.id);
    assert.deepEqual([stored.type, stored.redirect_uris, stored.first_party, stored.id_token_signed_response_alg], ['confidential', [CALLBACK], false, 'RS256']);
  });

  it('creates a public app with no secret at all, its settings as given, and records them in client.created', async () => {
    const reply = await create({
      type: 'public',
      description: 'The mobile app',
      scopes: ['openid', 'profile', 'phone', 'offline_access', 'account'],
      redirect_uris: ['com.example.shop:/callback', 'http://127.0.0.1/callback'],
      post_logout_redirect_uris: ['com.example.shop:/signed-out'],
      first_party: true,
      logo_uri: 'https://cdn.example.com/logo.png',
      id_token_signed_response_alg: 'EdDSA',
    });
    assert.equal(reply.statusCode, 201, reply.body);
    assert.equal(reply.headers['cache-control'], 'no-store');
    assert.equal(reply.headers.etag, '"1"');
    const created = reply.json();
    assert.equal(reply.headers.location, `/api/clients/${created.id}`);
    assert.ok(!('secret' in created), 'a public client is shown no secret');
    assert.deepEqual(created.secrets, []);
    assert.deepEqual(await secretRows(created.id), [], 'and has none stored');
    const settings = {
      name: 'Shop app',
      description: 'The mobile app',
      type: 'public',
      scopes: ['openid', 'profile', 'phone', 'offline_access', 'account'],
      status: 'active',
      rate_limit: null,
      redirect_uris: ['com.example.shop:/callback', 'http://127.0.0.1/callback'],
      post_logout_redirect_uris: ['com.example.shop:/signed-out'],
      first_party: true,
      logo_uri: 'https://cdn.example.com/logo.png',
      id_token_signed_response_alg: 'EdDSA',
    };
    for (const [field, value] of Object.entries(settings)) assert.deepEqual(created[field], value, field);
    const events = await eventsOf(created.id);
    assert.deepEqual(events.map((event) => [event.type, event.data]), [['client.created', { after: settings }]], 'no first_key: there is no secret');
    const listed = (await inject({ method: 'GET', url: '/api/clients?limit=100', headers: fixture.admin.auth })).json();
    const inList = listed.items.find((item: { id: string }) => item.id === created.id);
    assert.deepEqual(inList, created, 'the list shows it as the creation did');
  });

  it('takes https, loopback http on any port and private-use schemes; refuses every other redirect URI at its place, in plain words', async () => {
    const accepted = ['https://shop.example.com/callback?from=app', 'http://127.0.0.1:53124/cb?state=a%20b', 'http://[::1]:8080/cb', 'http://localhost:3000/cb', 'http://localhost/cb', 'com.example.shop:/callback', 'com.example.shop://auth/done'];
    const created = await createOk({ type: 'public', scopes: ['openid'], redirect_uris: accepted, post_logout_redirect_uris: ['com.example.shop:/signed-out?x=1'], logo_uri: 'https://cdn.example.com:8443/logo.png?v=2' });
    assert.deepEqual(created.redirect_uris, accepted, 'shown as given, character for character');
    const stored = await storedRow(created.id);
    assert.deepEqual([stored.redirect_uris, stored.post_logout_redirect_uris, stored.logo_uri], [accepted, ['com.example.shop:/signed-out?x=1'], 'https://cdn.example.com:8443/logo.png?v=2'], 'stored as given');

    const refused: [string, RegExp][] = [
      ['http://shop.example.com/callback', /http only on a loopback host/],
      ['http://localhost.evil.example/cb', /http only on a loopback host/],
      ['http://10.0.0.1/cb', /http only on a loopback host/],
      ['https://shop.example.com/callback#top', /must not have a fragment/],
      ['https://shop.example.com/callback#', /must not have a fragment/],
      ['https://user:pass@shop.example.com/callback', /must not hold a user name or password/],
      ['https://user@shop.example.com/callback', /must not hold a user name or password/],
      ['https://@shop.example.com/callback', /must not hold a user name or password/],
      ['/callback', /must be an absolute URL/],
      ['shop.example.com/callback', /must be an absolute URL/],
      ['javascript:alert(1)', /must use https, http on a loopback host, or a private-use scheme/],
      ['data:text/html,hello', /must use https, http on a loopback host, or a private-use scheme/],
      ['ftp://shop.example.com/cb', /must use https/],
      ['com.example.shop:', /must have a path after the scheme/],
    ];
    // Judged as the parser reads them, matched as they are stored: so only the parser's own
    // writing of a URI is taken, and every other spelling is refused, naming the normal form.
    const NORMAL = /^must be written in its normal form: /;
    for (const uri of [
      'https://shop.example.com/call back',
      ' https://shop.example.com/cb',
      'https://shop.example.com/c\tb',
      'https://shop.example.com/cb\n',
      'https://shop.example.com/cb?x=\u0001',
      'HTTPS://shop.example.com/cb',
      'https://SHOP.example.com/cb',
      'https://shop.example.com\\cb',
      'https:shop.example.com/cb',
      'https:/shop.example.com/cb',
      'http://127.1/cb',
      'http://2130706433/cb',
      'http://127.0.0.1./cb',
      'http://[0:0:0:0:0:0:0:1]/cb',
      'http://LOCALHOST/cb',
      'https://shop%2Eexample.com/cb',
      'https://\uff53\uff48\uff4f\uff50.example.com/cb',
      'https://shop\u200b.example.com/cb',
      'https://shop.example.com/\u200bcb',
      'https://shop.example.com/cb\u2028',
      'https://shop.example.com/\ufeffcb',
      'https://shop.example.com:443/cb',
      'Com.Example.Shop:/cb',
    ]) {
      refused.push([uri, NORMAL]);
    }
    refused.push(['https://shop.example.com', /^must be written in its normal form: https:\/\/shop\.example\.com\/ \(a URL with a host has a path of at least `\/`\)$/]);
    refused.push(['\ufeffhttps://shop.example.com/cb', /must be an absolute URL/]);
    for (const [uri, message] of refused) {
      const errors = await refusedCreate({ type: 'confidential', scopes: ['openid'], redirect_uris: [CALLBACK, uri] });
      assert.equal(errors.length, 1, `${uri}: ${JSON.stringify(errors)}`);
      assert.equal(errors[0]!.path, '/redirect_uris/1', uri);
      assert.match(errors[0]!.message, message, uri);
    }
    // Every problem at once, each at its place: both lists, and the logo.
    const all = await refusedCreate({
      type: 'public',
      scopes: ['openid'],
      redirect_uris: ['http://shop.example.com/cb'],
      post_logout_redirect_uris: [CALLBACK, 'https://shop.example.com/out#x'],
      logo_uri: 'http://cdn.example.com/logo.png',
    });
    assert.deepEqual(all.map((error) => error.path), ['/redirect_uris/0', '/post_logout_redirect_uris/1', '/logo_uri']);
    assert.match(all[2]!.message, /must be an https URL/);
    for (const logo of ['HTTPS://cdn.example.com/logo.png', 'https://cdn.example.com', 'https://cdn.example.com/lo go.png', 'https://127.1/logo.png']) {
      const errors = await refusedCreate({ type: 'public', scopes: ['openid'], redirect_uris: [CALLBACK], logo_uri: logo });
      assert.deepEqual(errors.map((error) => error.path), ['/logo_uri'], logo);
      assert.match(errors[0]!.message, NORMAL, logo);
    }
  });

  it('asks of an app 1 to 10 redirect URIs, at most 10 after sign-out, an algorithm it knows, and scopes it knows', async () => {
    const eleven = Array.from({ length: 11 }, (_, index) => `https://shop.example.com/cb/${index}`);
    for (const type of ['confidential', 'public']) {
      assert.deepEqual(await refusedCreate({ type, scopes: ['openid'] }), [{ path: '/redirect_uris', message: 'is required for a confidential or public client' }]);
      assert.deepEqual(await refusedCreate({ type, scopes: ['openid'], redirect_uris: [] }), [{ path: '/redirect_uris', message: 'must have at least 1 item' }]);
      assert.deepEqual(await refusedCreate({ type, scopes: ['openid'], redirect_uris: eleven }), [{ path: '/redirect_uris', message: 'must have at most 10 items' }]);
    }
    assert.deepEqual(await refusedCreate({ type: 'public', scopes: ['openid'], redirect_uris: [CALLBACK], post_logout_redirect_uris: eleven }), [{ path: '/post_logout_redirect_uris', message: 'must have at most 10 items' }]);
    assert.deepEqual(await refusedCreate({ type: 'public', scopes: ['openid'], redirect_uris: [CALLBACK, CALLBACK] }), [{ path: '/redirect_uris', message: 'must not repeat an item' }]);
    assert.deepEqual((await refusedCreate({ type: 'public', scopes: ['openid'], redirect_uris: [CALLBACK], id_token_signed_response_alg: 'HS256' })).map((error) => error.path), ['/id_token_signed_response_alg']);
    assert.deepEqual((await refusedCreate({ type: 'app', scopes: ['openid'], redirect_uris: [CALLBACK] })).map((error) => error.message), ['must be one of: service, confidential, public']);
    assert.deepEqual((await refusedCreate({ type: 'public', scopes: ['openid', 'address'], redirect_uris: [CALLBACK] })).map((error) => error.path), ['/scopes/1']);
    const ten = await createOk({ type: 'public', scopes: ['openid'], redirect_uris: eleven.slice(0, 10), post_logout_redirect_uris: eleven.slice(1) });
    assert.equal(ten.redirect_uris.length, 10);
    assert.equal(ten.post_logout_redirect_uris.length, 10);
  });

  it("refuses a service client's body every app field, whatever its value, and the sign-in scopes", async () => {
    const errors = await refusedCreate({
      type: 'service',
      scopes: ['variants:read', 'openid', 'offline_access'],
      redirect_uris: [CALLBACK],
      post_logout_redirect_uris: [],
      first_party: false,
      logo_uri: null,
      id_token_signed_response_alg: 'RS256',
    });
    assert.deepEqual(
      errors.map((error) => error.path),
      ['/redirect_uris', '/post_logout_redirect_uris', '/first_party', '/logo_uri', '/id_token_signed_response_alg', '/scopes/1', '/scopes/2'],
    );
    assert.ok(errors.every((error) => error.message.startsWith('is only for confidential and public clients')), JSON.stringify(errors));
    assert.deepEqual(await refusedCreate({ scopes: ['account'] }), [{ path: '/scopes/0', message: 'is only for confidential and public clients (a sign-in scope)' }], 'the default type is service');
  });

  it('refuses `type` in a PATCH; lets an app change its redirect URIs and settings by the same rules, recording client.updated', async () => {
    const app = await createOk({ type: 'confidential', scopes: ['openid'], redirect_uris: [CALLBACK], logo_uri: 'https://cdn.example.com/a.png' });
    const typeChange = await patch(app.id, { type: 'public' });
    assert.equal(typeChange.statusCode, 400);
    assert.deepEqual(problemOf(typeChange).errors, [{ path: '/type', message: 'is not an allowed field' }]);
    assert.deepEqual([(await storedRow(app.id)).type, (await storedRow(app.id)).version], ['confidential', 1], 'nothing changed');

    const changed = await patch(app.id, { redirect_uris: ['https://shop.example.com/v2/callback', 'http://localhost:8080/cb'], post_logout_redirect_uris: ['https://shop.example.com/'], first_party: true, logo_uri: null, id_token_signed_response_alg: 'EdDSA', scopes: ['openid', 'email'] }, { 'if-match': '"1"' });
    assert.equal(changed.statusCode, 200, changed.body);
    assert.equal(changed.headers.etag, '"2"');
    const after = changed.json();
    assert.deepEqual(
      [after.type, after.redirect_uris, after.post_logout_redirect_uris, after.first_party, after.logo_uri, after.id_token_signed_response_alg, after.scopes],
      ['confidential', ['https://shop.example.com/v2/callback', 'http://localhost:8080/cb'], ['https://shop.example.com/'], true, null, 'EdDSA', ['openid', 'email']],
    );
    const stored = await storedRow(app.id);
    assert.deepEqual([stored.redirect_uris, stored.first_party, stored.logo_uri, stored.id_token_signed_response_alg], [after.redirect_uris, true, null, 'EdDSA']);
    const updated = (await eventsOf(app.id)).filter((event) => event.type === 'client.updated');
    assert.deepEqual(updated.map((event) => event.data), [
      {
        before: { scopes: ['openid'], redirect_uris: [CALLBACK], post_logout_redirect_uris: [], first_party: false, logo_uri: 'https://cdn.example.com/a.png', id_token_signed_response_alg: 'RS256' },
        after: { scopes: ['openid', 'email'], redirect_uris: after.redirect_uris, post_logout_redirect_uris: ['https://shop.example.com/'], first_party: true, logo_uri: null, id_token_signed_response_alg: 'EdDSA' },
      },
    ]);

    for (const [payload, paths] of [
      [{ redirect_uris: ['http://shop.example.com/cb'] }, ['/redirect_uris/0']],
      [{ post_logout_redirect_uris: ['https://shop.example.com/#out'] }, ['/post_logout_redirect_uris/0']],
      [{ redirect_uris: [] }, ['/redirect_uris']],
      [{ redirect_uris: null }, ['/redirect_uris']],
      [{ logo_uri: 'javascript:alert(1)' }, ['/logo_uri']],
    ] as const) {
      const refused = await patch(app.id, payload);
      assert.equal(refused.statusCode, 400, JSON.stringify(payload));
      assert.deepEqual(problemOf(refused).errors?.map((error) => error.path), paths, JSON.stringify(payload));
    }
    assert.equal((await storedRow(app.id)).version, 2, 'no refused patch changed anything');
  });

  it("lists the schema's problems and the type's rules' in one reply; a PATCH's rules come before If-Match", async () => {
    const created = await refusedCreate({ type: 'public', scopes: ['openid'], redirect_uris: ['http://shop.example.com/cb'], first_party: 'yes', colour: 'blue' });
    assert.deepEqual(created.map((error) => error.path).sort(), ['/colour', '/first_party', '/redirect_uris/0']);
    const service = await refusedCreate({ name: '', scopes: ['variants:read', 'openid'], logo_uri: 'https://cdn.example.com/logo.png' });
    assert.deepEqual(service.map((error) => error.path).sort(), ['/logo_uri', '/name', '/scopes/1']);

    const app = await createOk({ type: 'confidential', scopes: ['openid'], redirect_uris: [CALLBACK] });
    const both = await patch(app.id, { redirect_uris: ['http://shop.example.com/cb'], first_party: 'yes' });
    assert.equal(both.statusCode, 400, both.body);
    assert.deepEqual(problemOf(both).errors?.map((error) => error.path).sort(), ['/first_party', '/redirect_uris/0']);
    const stale = await patch(app.id, { redirect_uris: ['http://shop.example.com/cb'] }, { 'if-match': '"7"' });
    assert.equal(stale.statusCode, 400, `a refused body is 400 whatever its tag: ${stale.body}`);
    assert.deepEqual(problemOf(stale).errors?.map((error) => error.path), ['/redirect_uris/0']);
    assert.equal((await patch(app.id, { first_party: true }, { 'if-match': '"7"' })).statusCode, 412, 'a good body with a stale tag stays 412');
    const unknown = await patch(randomUUID(), { first_party: 'yes' });
    assert.deepEqual([unknown.statusCode, problemOf(unknown).errors?.map((error) => error.path)], [400, ['/first_party']]);
    assert.equal((await storedRow(app.id)).version, 1, 'nothing changed');
  });

  it("sets an app's optional fields to their defaults with null in a PATCH ([], false, RS256, null)", async () => {
    const app = await createOk({ type: 'public', scopes: ['openid'], redirect_uris: [CALLBACK], post_logout_redirect_uris: ['https://shop.example.com/out'], first_party: true, logo_uri: 'https://cdn.example.com/a.png', id_token_signed_response_alg: 'EdDSA' });
    const cleared = await patch(app.id, { post_logout_redirect_uris: null, first_party: null, logo_uri: null, id_token_signed_response_alg: null }, { 'if-match': '"1"' });
    assert.equal(cleared.statusCode, 200, cleared.body);
    const after = cleared.json();
    assert.deepEqual([after.post_logout_redirect_uris, after.first_party, after.logo_uri, after.id_token_signed_response_alg, after.version], [[], false, null, 'RS256', 2]);
    const stored = await storedRow(app.id);
    assert.deepEqual([stored.post_logout_redirect_uris, stored.first_party, stored.logo_uri, stored.id_token_signed_response_alg], [[], false, null, 'RS256']);
    const again = await patch(app.id, { post_logout_redirect_uris: null, first_party: null, id_token_signed_response_alg: null });
    assert.equal(again.json().version, 2, 'already at their defaults: nothing changes');
  });

  it("refuses a service client's PATCH any app field or sign-in scope, and still takes its v3 fields", async () => {
    const service = await createOk({ scopes: ['variants:read'] });
    for (const payload of [
      { redirect_uris: [CALLBACK] },
      { first_party: false },
      { logo_uri: null },
      { id_token_signed_response_alg: 'RS256' },
      { scopes: ['variants:read', 'openid'] },
      { post_logout_redirect_uris: null },
      { first_party: null },
      { id_token_signed_response_alg: null },
    ]) {
      const refused = await patch(service.id, payload);
      assert.equal(refused.statusCode, 400, JSON.stringify(payload));
      assert.equal(problemOf(refused).code, 'validation_failed');
    }
    const renamed = await patch(service.id, { name: 'Checkout v2', scopes: ['variants:read', 'inventory:read'] });
    assert.equal(renamed.statusCode, 200);
    assert.deepEqual([renamed.json().name, renamed.json().version, renamed.json().type], ['Checkout v2', 2, 'service']);
    const updated = (await eventsOf(service.id)).filter((event) => event.type === 'client.updated');
    assert.deepEqual(updated.map((event) => event.data), [{ before: { name: 'Shop app', scopes: ['variants:read'] }, after: { name: 'Checkout v2', scopes: ['variants:read', 'inventory:read'] } }], 'as in v3');
  });

  it('refuses a public client a secret (409 client_type) and gives a confidential one its roll', async () => {
    const publicApp = await createOk({ type: 'public', scopes: ['openid'], redirect_uris: ['com.example.shop:/cb'] });
    const refused = await inject({ method: 'POST', url: `/api/clients/${publicApp.id}/secrets`, headers: fixture.admin.auth });
    assert.equal(refused.statusCode, 409);
    assert.equal(problemOf(refused).code, 'client_type');
    assert.deepEqual(await secretRows(publicApp.id), []);
    assert.deepEqual((await eventsOf(publicApp.id)).map((event) => event.type), ['client.created']);
    assert.equal((await storedRow(publicApp.id)).version, 1);
    assert.equal(problemOf(await inject({ method: 'POST', url: `/api/clients/${randomUUID()}/secrets`, headers: fixture.admin.auth })).code, 'not_found', 'an unknown client stays 404');

    const confidential = await createOk({ type: 'confidential', scopes: ['openid'], redirect_uris: [CALLBACK] });
    const rolled = await inject({ method: 'POST', url: `/api/clients/${confidential.id}/secrets`, headers: fixture.admin.auth });
    assert.equal(rolled.statusCode, 201, rolled.body);
    assert.equal((await secretRows(confidential.id)).length, 2);
  });

  it('keeps apps from the client credentials grant (400 unauthorized_client, a public app naming itself too) and from using a secret as a bearer token', async () => {
    const confidential = await createOk({ type: 'confidential', scopes: ['openid', 'variants:read'], redirect_uris: [CALLBACK] });
    for (const reply of [
      await token('grant_type=client_credentials', basic(confidential.id, confidential.secret)),
      await token(`grant_type=client_credentials&client_id=${confidential.id}&client_secret=${confidential.secret}&scope=variants:read`),
    ]) {
      assert.equal(reply.statusCode, 400, reply.body);
      assert.match(String(reply.headers['content-type']), /^application\/json/);
      assert.equal(reply.headers['cache-control'], 'no-store');
      assert.equal(reply.json().error, 'unauthorized_client');
      assert.equal(typeof reply.json().error_description, 'string');
      assert.equal(reply.json().access_token, undefined);
    }
    const wrongSecret = await token('grant_type=client_credentials', basic(confidential.id, `shop_sk_${'A'.repeat(43)}`));
    assert.deepEqual([wrongSecret.statusCode, wrongSecret.json().error], [401, 'invalid_client'], 'the client is authenticated first');
    const refused = await inject({ method: 'GET', url: '/api/variants', headers: bearer(confidential.secret) });
    assert.equal(refused.statusCode, 401);
    assert.equal(problemOf(refused).code, 'invalid_token', "an app's secret never calls the API as the app");

    const publicApp = await createOk({ type: 'public', scopes: ['openid', 'variants:read'], redirect_uris: ['com.example.shop:/cb'] });
    // Section 18: apps never use the client credentials grant (unauthorized_client), a public app that names itself (`none`) included.
    for (const reply of [await token(`grant_type=client_credentials&client_id=${publicApp.id}`), await token(`grant_type=client_credentials&client_id=${publicApp.id}&client_secret=`)]) {
      assert.deepEqual([reply.statusCode, reply.json().error], [400, 'unauthorized_client'], reply.body);
    }
    const stolenSecret = await token('grant_type=client_credentials', basic(publicApp.id, confidential.secret));
    assert.deepEqual([stolenSecret.statusCode, stolenSecret.json().error], [401, 'invalid_client'], 'another client\'s secret authenticates nobody');

    const service = await createOk({ scopes: ['variants:read'] });
    const granted = await token('grant_type=client_credentials', basic(service.id, service.secret));
    assert.equal(granted.statusCode, 200, 'a service client is granted as before');
    assert.equal((await inject({ method: 'GET', url: '/api/variants', headers: bearer(granted.json().access_token) })).statusCode, 200);
    assert.equal((await inject({ method: 'GET', url: '/api/variants', headers: bearer(service.secret) })).statusCode, 200);
  });

  it("refuses a confidential app that is disabled, or whose secret expired or was deleted, as an unknown client (401 invalid_client), not as an app", async () => {
    const disabled = await createOk({ type: 'confidential', scopes: ['openid'], redirect_uris: [CALLBACK] });
    assert.equal((await patch(disabled.id, { status: 'disabled' })).statusCode, 200);
    const expired = await createOk({ type: 'confidential', scopes: ['openid'], redirect_uris: [CALLBACK] });
    await fixture.db.updateTable('api_client_secrets').set({ expires_at: new Date(Date.now() - 1000) }).where('client_id', '=', expired.id).execute();
    const deleted = await createOk({ type: 'confidential', scopes: ['openid'], redirect_uris: [CALLBACK] });
    const removed = await inject({ method: 'DELETE', url: `/api/clients/${deleted.id}/secrets/${deleted.secrets[0].id}`, headers: fixture.admin.auth });
    assert.equal(removed.statusCode, 204);
    for (const app of [disabled, expired, deleted]) {
      for (const reply of [await token('grant_type=client_credentials', basic(app.id, app.secret)), await token(`grant_type=client_credentials&client_id=${app.id}&client_secret=${app.secret}`)]) {
        assert.deepEqual([reply.statusCode, reply.json().error], [401, 'invalid_client'], reply.body);
      }
    }
  });

  it("refuses an app's secret as a bearer token on a write route too (401), and writes nothing", async () => {
    const confidential = await createOk({ type: 'confidential', scopes: ['openid', 'variants:write'], redirect_uris: [CALLBACK] });
    const body = newVariantBody(1, 'app-bearer');
    const refused = await inject({ method: 'POST', url: '/api/variants', headers: bearer(confidential.secret), payload: body });
    assert.equal(refused.statusCode, 401, refused.body);
    assert.equal(problemOf(refused).code, 'invalid_token');
    assert.equal(await fixture.db.selectFrom('variants').select('id').where('sku', '=', body.sku).executeTakeFirst(), undefined);
  });

  it('refuses an access token of a client that is no longer a service client (the database changed under it), on reads and writes', async () => {
    const service = await createOk({ scopes: ['variants:read', 'variants:write'] });
    const granted = await token('grant_type=client_credentials', basic(service.id, service.secret));
    assert.equal(granted.statusCode, 200, granted.body);
    const accessToken = granted.json().access_token;
    assert.equal((await inject({ method: 'GET', url: '/api/variants', headers: bearer(accessToken) })).statusCode, 200);
    // The check constraint allows it only with an app's redirect URIs and algorithm, in one statement.
    await sql`update api_clients set type = 'confidential', redirect_uris = ${[CALLBACK]}, id_token_signed_response_alg = 'RS256' where id = ${service.id}`.execute(fixture.db);
    const read = await inject({ method: 'GET', url: '/api/variants', headers: bearer(accessToken) });
    assert.equal(read.statusCode, 401, read.body);
    assert.equal(problemOf(read).code, 'invalid_token');
    const body = newVariantBody(1, 'former-service');
    const write = await inject({ method: 'POST', url: '/api/variants', headers: bearer(accessToken), payload: body });
    assert.equal(write.statusCode, 401, write.body);
    assert.equal(await fixture.db.selectFrom('variants').select('id').where('sku', '=', body.sku).executeTakeFirst(), undefined);
  });
});

describe('the migration that gives clients a type', () => {
  it('makes every client there was before a service client, with the app fields at their empty values', async () => {
    const directory = path.join(import.meta.dirname, '../../src/db/migrations');
    const files = readdirSync(directory).filter((file) => file.endsWith('.ts')).sort();
    const migrations: [string, Migration][] = await Promise.all(
      files.map(async (file) => [file.replace(/\.ts$/, ''), Object.values(await import(path.join(directory, file)))[0] as Migration] as [string, Migration]),
    );
    const before = Object.fromEntries(migrations.filter(([name]) => name < '0024-client-types'));
    assert.ok(migrations.some(([name]) => name === '0024-client-types'));
    const scratch = onPostgres ? await createScratchDatabase() : undefined;
    const database = await openDatabase({ databaseUrl: scratch?.url, dataDir: 'memory://', poolMode });
    try {
      await runMigrations(database.db, before);
      const id = randomUUID();
      await sql`insert into api_clients (id, name, scopes, status, created_by, created_at, updated_at) values (${id}, 'Old', '{variants:read}', 'active', ${randomUUID()}, now(), now())`.execute(database.db);
      await runMigrations(database.db, Object.fromEntries(migrations));
      const row = await database.db.selectFrom('api_clients').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      assert.deepEqual(
        { type: row.type, redirect_uris: row.redirect_uris, post_logout_redirect_uris: row.post_logout_redirect_uris, first_party: row.first_party, logo_uri: row.logo_uri, id_token_signed_response_alg: row.id_token_signed_response_alg },
        { type: 'service', ...EMPTY_APP_FIELDS },
      );
      // The table holds a service client to its empty app fields, whatever code writes it.
      await assert.rejects(sql`update api_clients set redirect_uris = '{https://shop.example.com/cb}' where id = ${id}`.execute(database.db));
      // And an app to its rules: redirect URIs and an algorithm, and no type beyond the three.
      const insertApp = (type: string, redirectUris: string[], algorithm: string | null) =>
        sql`insert into api_clients (id, name, type, scopes, status, redirect_uris, id_token_signed_response_alg, created_by, created_at, updated_at)
            values (${randomUUID()}, 'App', ${type}, '{openid}', 'active', ${redirectUris}, ${algorithm}, ${randomUUID()}, now(), now())`.execute(database.db);
      await assert.rejects(insertApp('public', [], 'RS256'), 'an app with no redirect URI');
      await assert.rejects(insertApp('confidential', [CALLBACK], null), 'an app with no algorithm');
      await assert.rejects(insertApp('app', [CALLBACK], 'RS256'), 'a type the service does not know');
      await assert.rejects(insertApp('public', [CALLBACK], 'HS256'), 'an algorithm the service does not know');
      await insertApp('public', [CALLBACK], 'RS256');
    } finally {
      await database.close();
      await scratch?.drop();
    }
  });
});
