import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import ts from 'typescript';
import { clientTypesFor } from '../helpers/openapi-document.js';
import { buildTestApp, loginAdmin, type TestApp } from '../helpers/test-app.js';

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

  it('generates client types with openapi-typescript that type-check a small client, which then works', async () => {
    const folder = await mkdtemp(path.join(tmpdir(), 'openapi-client-'));
    try {
      const here = path.join(import.meta.dirname, 'client-example');
      await writeFile(path.join(folder, 'api-types.ts'), await clientTypesFor(document));
      await copyFile(path.join(here, 'client.ts'), path.join(folder, 'client.ts'));
      const program = ts.createProgram([path.join(folder, 'client.ts')], {
        strict: true,
        noEmit: true,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
        types: [],
        skipLibCheck: true,
      });
      const problems = ts.getPreEmitDiagnostics(program).map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      assert.deepEqual(problems, []);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }

    await testApp.app.listen({ port: 0, host: '127.0.0.1' });
    const baseUrl = `http://127.0.0.1:${(testApp.app.server.address() as AddressInfo).port}`;
    const admin = await loginAdmin(testApp.app);
    // Imported by a computed path, so the project's type-check does not look for the generated types.
    const clientPath = path.join(import.meta.dirname, 'client-example', 'client.ts');
    const client = (await import(clientPath)) as {
      createVariant(baseUrl: string, token: string, body: Record<string, unknown>): Promise<{ id: string }>;
      searchVariants(baseUrl: string, token: string, query: Record<string, unknown>): Promise<{ items: { id: string }[] }>;
      reprice(baseUrl: string, token: string, id: string, price: number): Promise<{ price: number }>;
    };
    const sku = `CLIENT-${randomUUID().slice(0, 8)}`;
    const created = await client.createVariant(baseUrl, admin.accessToken, { product_id: 'client-1', sku, name: 'From the client', price: 100 });
    const found = await client.searchVariants(baseUrl, admin.accessToken, { q: sku, include_total: true });
    assert.deepEqual(found.items.map((item) => item.id), [created.id]);
    const repriced = await client.reprice(baseUrl, admin.accessToken, created.id, 250);
    assert.equal(repriced.price, 250);
  });
});
