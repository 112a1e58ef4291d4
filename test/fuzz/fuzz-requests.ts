import { randomUUID } from 'node:crypto';
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { PROBLEM_CODES } from '../../src/http/errors.js';

export interface FuzzTargets {
  userIds: string[];
  variantIds: string[];
  skus: string[];
  tokens: string[];
}

type Operation = { responses: Record<string, { content?: Record<string, { schema: unknown }> }> };

/** Compiles the documented 2xx schema of every operation, with refs into the document's components. */
function responseValidators(document: { paths: Record<string, Record<string, Operation>>; components: unknown }) {
  const ajv = new Ajv.default({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ $id: 'openapi', components: document.components });
  const routes: { method: string; pattern: RegExp; validators: Map<number, ValidateFunction> }[] = [];
  for (const [path, operations] of Object.entries(document.paths)) {
    const pattern = new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    for (const [method, operation] of Object.entries(operations)) {
      const validators = new Map<number, ValidateFunction>();
      for (const [status, response] of Object.entries(operation.responses)) {
        const schema = response.content?.['application/json']?.schema;
        if (Number(status) < 300 && schema) {
          const rebased = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/'));
          validators.set(Number(status), ajv.compile(rebased));
        }
      }
      routes.push({ method: method.toUpperCase(), pattern, validators });
    }
  }
  return (method: string, path: string, status: number) =>
    routes.find((route) => route.method === method && route.pattern.test(path))?.validators.get(status);
}

const oddStrings = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('', ' ', '\u0000', '../../etc/passwd', "' or 1=1 --", '%', '_', '\\', '💥', 'a'.repeat(300), 'Ä'.repeat(70)),
  fc.constant('x'.repeat(5000)),
);
const numbers = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -1, 1, 1e9, 1e9 + 1, 1e12, 1e12 + 1, 1e15, 1e15 + 1, -1e15, Number.MAX_SAFE_INTEGER, 2 ** 63, 1.5),
);
const anyValue = fc.oneof(oddStrings, numbers, fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 3 }));

const fieldValues: Record<string, fc.Arbitrary<unknown>> = {
  email: fc.oneof(fc.emailAddress(), oddStrings),
  password: fc.oneof(fc.string({ minLength: 8, maxLength: 20 }), oddStrings),
  current_password: oddStrings,
  new_password: fc.oneof(fc.string({ minLength: 8, maxLength: 20 }), oddStrings),
  name: fc.oneof(fc.string({ minLength: 1, maxLength: 30 }), oddStrings),
  phone: fc.oneof(fc.constant(null), fc.string({ maxLength: 40 })),
  refresh_token: oddStrings,
  role: fc.oneof(fc.constantFrom('user', 'manager', 'admin'), oddStrings),
  status: fc.oneof(fc.constantFrom('active', 'suspended'), oddStrings),
  delta: numbers,
  balance: numbers,
  reason: fc.oneof(fc.string({ minLength: 1, maxLength: 20 }), oddStrings),
  product_id: fc.oneof(fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,10}$/), oddStrings),
  sku: fc.oneof(fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,10}$/), oddStrings),
  price: numbers,
  stock: numbers,
  lines: fc.oneof(
    fc.array(fc.record({ variant_id: fc.oneof(fc.uuid(), oddStrings), quantity: numbers, delta: numbers }, { requiredKeys: [] }), { maxLength: 4 }),
    anyValue,
  ),
  reference: fc.oneof(fc.constant(null), fc.string({ maxLength: 210 }), oddStrings),
  expires_in: numbers,
  attributes: fc.oneof(fc.dictionary(fc.string({ maxLength: 60 }), fc.string({ maxLength: 210 }), { maxKeys: 22 }), anyValue),
  unknown_field: anyValue,
};

const bodies = fc.oneof(
  fc.record(Object.fromEntries(Object.entries(fieldValues).map(([key, value]) => [key, value])), { requiredKeys: [] }).map((body) => JSON.stringify(body)),
  fc.jsonValue().map((value) => JSON.stringify(value)),
  fc.string({ maxLength: 60 }),
  fc.constantFrom('{', '{"a":', '[1,2', 'null', '""', '{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{}}}'),
);

function requests(targets: FuzzTargets) {
  const uuid = fc.oneof(fc.constantFrom(...targets.userIds, ...targets.variantIds), fc.uuid(), fc.constant(randomUUID().toUpperCase()));
  const idSegment = fc.oneof(uuid, oddStrings.map((value) => encodeURIComponent(value)));
  const skuSegment = fc.oneof(fc.constantFrom(...targets.skus), oddStrings.map((value) => encodeURIComponent(value)));
  const path = fc.oneof(
    fc.constantFrom('/api/variants/sku/%E0%A4%A', '/api/users/%', '/api/variants/%zz', '/api/users/profile/%'),
    fc.constantFrom('/api/auth/register', '/api/auth/login', '/api/auth/refresh', '/api/auth/logout', '/api/users/profile', '/api/users/change-password', '/api/users', '/healthz', '/readyz', '/api/variants/product', '/api/variants/sku', '/api/variants', '/api/variants/batch', '/api/events', '/api/webhooks', '/api/stock-adjustments', '/api/reservations'),
    idSegment.map((id) => `/api/events/${id}`),
    fc.tuple(idSegment, fc.constantFrom('', '/deliveries')).map(([id, tail]) => `/api/webhooks/${id}${tail}`),
    idSegment.map((id) => `/api/users/${id}`),
    fc.tuple(idSegment, fc.constantFrom('role', 'status', 'balance', 'balance/ledger', 'sessions', 'verify-email/resend', 'nothing')).map(([id, tail]) => `/api/users/${id}/${tail}`),
    fc.tuple(idSegment, idSegment).map(([id, sessionId]) => `/api/users/${id}/sessions/${sessionId}`),
    idSegment.map((id) => `/api/variants/${id}`),
    fc.tuple(idSegment, fc.constantFrom('stock', 'stock/movements', 'reservations')).map(([id, tail]) => `/api/variants/${id}/${tail}`),
    fc.tuple(idSegment, fc.constantFrom('', '/commit', '/release')).map(([id, tail]) => `/api/reservations/${id}${tail}`),
    skuSegment.map((sku) => `/api/variants/sku/${sku}`),
    skuSegment.map((product) => `/api/variants/product/${product}`),
    fc.webPath().map((path) => (path.startsWith('/') ? path : `/${path}`)),
  );
  const query = fc.oneof(
    fc.constant(''),
    fc.record({ limit: fc.oneof(fc.integer({ min: -5, max: 120 }).map(String), oddStrings), cursor: oddStrings, q: oddStrings, role: oddStrings, include_total: fc.constantFrom('true', 'false', 'yes') }, { requiredKeys: [] })
      .map((parameters) => `?${new URLSearchParams(parameters as Record<string, string>).toString()}`),
  );
  const authorization = fc.oneof(
    fc.constant(undefined),
    { arbitrary: fc.constantFrom(...targets.tokens).map((token) => `Bearer ${token}`), weight: 6 },
    oddStrings.map((value) => `Bearer ${value}`),
    fc.constantFrom('Basic YTpi', 'Bearer', 'bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.'),
  );
  const contentType = fc.oneof(
    { arbitrary: fc.constant('application/json'), weight: 5 },
    fc.constantFrom('application/json; charset=utf-8', 'text/plain', 'application/xml', undefined),
  );
  const extraHeaders = fc.record(
    { 'if-match': fc.oneof(fc.constantFrom('"1"', '"2"', '*', 'W/"1"'), oddStrings), 'idempotency-key': oddStrings },
    { requiredKeys: [] },
  );
  return fc.record({
    method: fc.oneof({ arbitrary: fc.constantFrom('GET', 'PUT', 'POST'), weight: 4 }, fc.constantFrom('DELETE', 'PATCH', 'HEAD', 'OPTIONS')),
    path,
    query,
    authorization,
    contentType,
    extraHeaders,
    body: fc.option(bodies, { nil: undefined }),
  });
}

const knownCodes = new Set<string>(PROBLEM_CODES);

function checkReply(
  response: LightMyRequestResponse,
  method: string,
  path: string,
  validatorFor: ReturnType<typeof responseValidators>,
): void {
  if (response.statusCode >= 500) throw new Error(`${method} ${path} answered ${response.statusCode}: ${response.body}`);
  if (!response.headers['x-request-id']) throw new Error(`${method} ${path}: no X-Request-Id`);
  if (method === 'HEAD') return;
  if (response.statusCode >= 400) {
    if (!String(response.headers['content-type']).startsWith('application/problem+json')) {
      throw new Error(`${method} ${path}: ${response.statusCode} is not problem+json`);
    }
    const problem = response.json();
    if (problem.status !== response.statusCode || typeof problem.detail !== 'string' || typeof problem.title !== 'string' || typeof problem.type !== 'string' || !knownCodes.has(problem.code)) {
      throw new Error(`${method} ${path}: malformed problem ${response.body}`);
    }
    if (/(select |insert |update |from "|node_modules|\.ts:\d+)/i.test(response.body)) {
      throw new Error(`${method} ${path}: leaks internals: ${response.body}`);
    }
    return;
  }
  const validate = validatorFor(method, path, response.statusCode);
  if (response.body.length > 0 && validate && !validate(response.json())) {
    throw new Error(`${method} ${path}: ${response.statusCode} body breaks its schema: ${JSON.stringify(validate.errors)}`);
  }
}

/** Sends `numRuns` generated requests and throws on the first reply that breaks the contract. */
export async function fuzzRequests(
  app: FastifyInstance,
  targets: FuzzTargets,
  numRuns: number,
  seed?: number,
): Promise<Map<number, number>> {
  const validatorFor = responseValidators(app.swagger() as never);
  const statusCounts = new Map<number, number>();
  await fc.assert(
    fc.asyncProperty(requests(targets), async (request) => {
      const headers: Record<string, string> = { ...request.extraHeaders } as Record<string, string>;
      if (request.authorization) headers.authorization = request.authorization;
      if (request.contentType) headers['content-type'] = request.contentType;
      const options: InjectOptions = {
        method: request.method as InjectOptions['method'],
        url: `${request.path}${request.query}`,
        headers,
        ...(request.body !== undefined && !['GET', 'HEAD'].includes(request.method) ? { payload: request.body } : {}),
      };
      const response = await app.inject(options);
      statusCounts.set(response.statusCode, (statusCounts.get(response.statusCode) ?? 0) + 1);
      checkReply(response, request.method, request.path, validatorFor);
    }),
    { numRuns, ...(seed !== undefined ? { seed } : {}), verbose: 0, endOnFailure: true },
  );
  return statusCounts;
}
