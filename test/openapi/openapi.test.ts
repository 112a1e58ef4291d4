import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createVariant, reprice, searchVariants } from '../../client/example.js';
import { createShopClient, ProblemError, reply } from '../../client/shop-client.js';
import { clientLimitsFor, clientTypesFor, currentOpenApiDocument } from '../helpers/openapi-document.js';
import { buildTestApp, createUser, login, loginAdmin, type TestApp } from '../helpers/test-app.js';
import { enrolTotp } from '../mfa/mfa-helpers.js';

type Operation = {
  operationId?: string;
  parameters?: { name: string; in: string; required?: boolean; schema: Record<string, unknown> }[];
  requestBody?: { content: Record<string, { schema: Record<string, unknown> & { examples?: unknown[] }; example?: unknown; examples?: unknown }> };
  responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, unknown> }>;
};

describe('the OpenAPI description', () => {
  let testApp: TestApp;
  let document: { servers: { url: string }[]; paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, any> } };
  before(async () => {
    testApp = await buildTestApp({ environment: { PUBLIC_URL: 'https://shop.example/accounts/' } });
    document = (await testApp.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  });
  after(() => testApp.close());

  const operations = () =>
    Object.entries(document.paths).flatMap(([route, methods]) => Object.entries(methods).map(([method, operation]) => ({ name: `${method.toUpperCase()} ${route}`, method, route, operation })));

  it('names every operation once, and states the servers from PUBLIC_URL', () => {
    const ids = operations().map(({ name, operation }) => {
      assert.ok(operation.operationId, `${name} has an operationId`);
      return operation.operationId;
    });
    assert.equal(new Set(ids).size, ids.length, 'operationIds are unique');
    assert.deepEqual(document.servers.map((server) => server.url), ['https://shop.example/accounts']);
  });

  it('makes paging parameters optional and renders closed sets as enums', () => {
    const listUsers = document.paths['/api/users']!.get!;
    for (const name of ['limit', 'cursor', 'include_total']) {
      const parameter = listUsers.parameters?.find((candidate) => candidate.name === name);
      assert.ok(parameter, name);
      assert.notEqual(parameter.required, true, `${name} is optional`);
    }
    assert.deepEqual(listUsers.parameters?.find((parameter) => parameter.name === 'role')?.schema.enum, ['user', 'manager', 'admin']);
    assert.deepEqual(document.components.schemas.User.properties.role.enum, ['user', 'manager', 'admin']);
  });

  it('is matched by schemathesis.toml: every paged list is among the operations whose opaque cursor a schema cannot describe', async () => {
    // Schemathesis generates cursors the service never issued; each paged list must be exempt
    // from its positive-data check, or CI's conformance run fails on the first new list.
    const settings = await readFile(path.join(import.meta.dirname, '../../schemathesis.toml'), 'utf8');
    const cursorSection = settings.split('[[operations]]').find((section) => section.includes('The cursor is opaque')) ?? '';
    const exempt = new Set([...cursorSection.matchAll(/"(GET [^"]+)"/g)].map((match) => match[1]));
    const paged = operations().filter(({ operation }) => operation.parameters?.some((parameter) => parameter.name === 'cursor')).map(({ name }) => name);
    assert.ok(paged.length > 5);
    assert.deepEqual(paged.filter((name) => !exempt.has(name)), []);
  });

  it('documents the headers the service sends and an example for every request body', () => {
    for (const { name, method, operation } of operations()) {
      for (const [status, response] of Object.entries(operation.responses)) {
        if (status === '401') assert.ok(response.headers?.['www-authenticate'], `${name} ${status} WWW-Authenticate`);
        if (status === '429' || status === '503') assert.ok(response.headers?.['retry-after'], `${name} ${status} Retry-After`);
        // Reservations, a client's secrets and second factors have no version, so no ETag (API sections 6, 11 and 12).
        const versioned = !name.includes('/api/reservations') && !name.includes('/secrets') && !name.includes('/api/auth/mfa');
        if (status === '201') assert.ok(response.headers?.location && (response.headers?.etag || !versioned), `${name} 201 Location and ETag`);
        if (!versioned) assert.equal(response.headers?.etag, undefined, `${name} has no ETag`);
      }
      if (method === 'get' && operation.responses['304']) assert.ok(operation.responses['200']?.headers?.etag, `${name} 200 ETag`);
      const bodies = Object.values(operation.requestBody?.content ?? {});
      for (const body of bodies) assert.ok(body.example ?? body.examples ?? body.schema.examples?.length, `${name} has a request body example`);
    }
    for (const route of ['/api/users/{id}', '/api/variants/{id}', '/api/variants/sku/{sku}', '/api/users/profile']) {
      assert.ok(document.paths[route]!.get!.responses['304'], `${route} documents 304`);
    }
  });

  /** The client examples go over HTTP, as a caller would. */
  const listening = async () => {
    if (!testApp.app.server.listening) await testApp.app.listen({ port: 0, host: '127.0.0.1' });
    return `http://127.0.0.1:${(testApp.app.server.address() as AddressInfo).port}`;
  };

  it('ships client/api-types.ts as openapi-typescript generates it, and client/api-limits.ts, from the current document (`npm run openapi` rewrites it)', async () => {
    const committed = await readFile(path.join(import.meta.dirname, '../../client/api-types.ts'), 'utf8');
    const document = await currentOpenApiDocument();
    assert.ok(committed === (await clientTypesFor(document)), 'client/api-types.ts is stale: run `npm run openapi`');
    const limits = await readFile(path.join(import.meta.dirname, '../../client/api-limits.ts'), 'utf8');
    assert.equal(limits, clientLimitsFor(document), 'client/api-limits.ts is stale: run `npm run openapi`');
  });

  it('runs the typed client example against the service: create, search, and a conditional price change', async () => {
    const baseUrl = await listening();
    const admin = await loginAdmin(testApp.app);
    const client = createShopClient({ baseUrl, accessToken: () => admin.accessToken });
    const sku = `CLIENT-${randomUUID().slice(0, 8)}`;
    const created = await createVariant(client, { product_id: 'client-1', sku, name: 'From the client', price: 100 });
    const found = await searchVariants(client, { q: sku, include_total: true });
    assert.deepEqual(found.items.map((item) => item.id), [created.id]);
    assert.equal(found.total, 1);
    const repriced = await reprice(client, created.id, 250);
    assert.deepEqual([repriced.price, repriced.version], [250, created.version + 1]);
    await assert.rejects(
      reply(client.GET('/api/variants/{id}', { params: { path: { id: randomUUID() } } })),
      (error: unknown) => error instanceof ProblemError && error.problem.status === 404 && error.problem.code === 'not_found',
    );
  });

  it('sends a request again once, after a refresh, when its access token is refused', async () => {
    const admin = await loginAdmin(testApp.app);
    let token = 'an-expired-token';
    let refreshes = 0;
    const baseUrl = await listening();
    // A browser's fetch must be called as a plain function (a method call is "Illegal invocation"): this one checks that too.
    const fetchAsBrowsersAllow = function (this: unknown, request: Request) {
      assert.ok(this === undefined || this === globalThis, 'fetch is called as a plain function');
      return globalThis.fetch(request);
    } as typeof globalThis.fetch;
    const client = createShopClient({ baseUrl, fetch: fetchAsBrowsersAllow, accessToken: () => token, refresh: async () => ((refreshes += 1), (token = admin.accessToken), true) });
    const sku = `REFRESH-${randomUUID().slice(0, 8)}`;
    const created = await createVariant(client, { product_id: 'client-2', sku, name: 'After a refresh', price: 100 });
    assert.equal(created.sku, sku, 'the body was sent again intact');
    assert.equal(refreshes, 1);
  });

  it('shares one refresh among requests refused at once, and refreshes for no other 401 than invalid_token', async () => {
    const admin = await loginAdmin(testApp.app);
    let token = 'an-expired-token';
    let refreshes = 0;
    const client = createShopClient({
      baseUrl: await listening(),
      accessToken: () => token,
      // Slow, as a refresh over the network is: the other refused requests arrive while it runs.
      refresh: async () => {
        refreshes += 1;
        await new Promise((resolve) => setTimeout(resolve, 100));
        token = admin.accessToken;
        return true;
      },
    });
    const profiles = await Promise.all([1, 2, 3].map(() => reply(client.GET('/api/users/profile'))));
    assert.deepEqual(profiles.map(({ body }) => body.id), [admin.id, admin.id, admin.id]);
    assert.equal(refreshes, 1, 'three refused requests, one refresh');

    await assert.rejects(
      reply(client.POST('/api/auth/login', { body: { email: admin.email, password: 'not-the-password' } })),
      (error: unknown) => error instanceof ProblemError && error.problem.code === 'invalid_credentials',
    );
    assert.equal(refreshes, 1, 'a wrong password is not an expired token');
  });

  it('sends a sensitive request again once, after one step-up shared by the requests that asked for it, also after a refresh', async () => {
    // The factor is added in another session: this one started before it, so its second factor is not verified.
    const admin = await createUser(testApp.app, { role: 'admin' });
    const { device } = await enrolTotp(testApp.app, await login(testApp.app, admin.email, admin.password));
    const customer = await createUser(testApp.app);
    const baseUrl = await listening();
    const credit = (client: ReturnType<typeof createShopClient>, delta: number) =>
      reply(client.PUT('/api/users/{id}/balance', { params: { path: { id: customer.id } }, body: { delta, reason: 'Goodwill' } }));

    const declining = createShopClient({ baseUrl, accessToken: () => admin.accessToken, stepUp: async () => false });
    await assert.rejects(credit(declining, 1), (error: unknown) => error instanceof ProblemError && error.problem.code === 'step_up_required');

    // The access token has expired as well: each request is refreshed, and then meets step_up_required.
    let token = 'an-expired-token';
    let refreshes = 0;
    let stepUps = 0;
    // The step-up waits until both requests have been refused, as a person typing a code gives the other time to arrive.
    let refusals = 0;
    let bothRefused: () => void = () => {};
    const refusedTogether = new Promise<void>((resolve) => (bothRefused = resolve));
    const countingFetch = (async (request: Request) => {
      const answer = await globalThis.fetch(request);
      if (answer.status === 403 && (refusals += 1) === 2) bothRefused();
      return answer;
    }) as typeof globalThis.fetch;
    const client = createShopClient({
      baseUrl,
      fetch: countingFetch,
      accessToken: () => token,
      refresh: async () => ((refreshes += 1), (token = admin.accessToken), true),
      stepUp: async () => {
        stepUps += 1;
        await refusedTogether;
        await reply(client.POST('/api/auth/mfa/verify', { body: { code: device.next() } }));
        return true;
      },
    });
    const replies = await Promise.all([credit(client, 100), credit(client, 250)]);
    // Either may commit first (on PostgreSQL they run at once): the last reply shows both, once each.
    const [first, last] = replies.map(({ body }) => body.balance).sort((a, b) => a - b);
    assert.ok(first === 100 || first === 250, `the first change alone: ${first}`);
    assert.equal(last, 350, 'each change applied once, with its body intact');
    const ledger = await testApp.db.selectFrom('balance_ledger').select('delta').where('user_id', '=', customer.id).execute();
    assert.deepEqual(ledger.map((entry) => Number(entry.delta)).sort((a, b) => a - b), [100, 250]);
    assert.equal(refreshes, 1, 'one refresh');
    assert.equal(stepUps, 1, 'two refused requests, one step-up');
  });
});
