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
  /** A public app with a registered redirect URI, so generated authorization requests reach the pages too. */
  app: { id: string; redirectUri: string };
  locationIds: string[];
}

/** The hosted pages (API.md section 18): their errors are HTML pages, not problem+json. */
const PAGE_PATHS = new Set(['/oauth/authorize', '/oauth/forgot-password', '/oauth/logout']);
/** The authorization server's endpoints, whose errors are RFC 6749's `{error, error_description}` (or a bare 401 with WWW-Authenticate). */
const OAUTH_JSON_PATHS = new Set(['/api/oauth/token', '/oauth/revoke', '/oauth/introspect', '/oauth/userinfo']);
const OAUTH_ERRORS = new Set(['invalid_request', 'invalid_client', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type', 'invalid_scope', 'insufficient_scope', 'invalid_token', 'unsupported_token_type', 'rate_limited']);

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
  code: fc.oneof(fc.stringMatching(/^[0-9]{6}$/), fc.stringMatching(/^[A-Za-z0-9_-]{1,32}$/), oddStrings),
  priority: numbers,
  is_default: fc.oneof(fc.boolean(), anyValue),
  from_location_id: fc.oneof(fc.uuid(), oddStrings),
  to_location_id: fc.oneof(fc.uuid(), oddStrings),
  location_id: fc.oneof(fc.uuid(), oddStrings),
  split: fc.oneof(fc.boolean(), anyValue),
  response: anyValue,
  unknown_field: anyValue,
};

/** The fields of the pages' forms and of the token endpoints, sent as application/x-www-form-urlencoded. */
const formFields = {
  action: fc.oneof(fc.constantFrom('password', 'send_code', 'email_code', 'passkey', 'totp', 'recovery_code', 'create', 'allow', 'deny', 'logout', 'continue'), oddStrings),
  csrf_token: oddStrings,
  email: fc.oneof(fc.emailAddress(), oddStrings),
  password: oddStrings,
  code: oddStrings,
  recovery_code: oddStrings,
  name: oddStrings,
  webauthn: fc.oneof(fc.jsonValue().map((value) => JSON.stringify(value)), oddStrings),
  grant_type: fc.oneof(fc.constantFrom('authorization_code', 'refresh_token', 'client_credentials', 'password'), oddStrings),
  client_id: fc.oneof(fc.uuid(), oddStrings),
  client_secret: oddStrings,
  redirect_uri: oddStrings,
  code_verifier: oddStrings,
  refresh_token: oddStrings,
  token: oddStrings,
  token_type_hint: fc.oneof(fc.constantFrom('access_token', 'refresh_token'), oddStrings),
  scope: fc.oneof(fc.constantFrom('openid', 'openid email profile offline_access', 'variants:read'), oddStrings),
};
const formBodies = fc
  .record(formFields, { requiredKeys: [] })
  .chain((fields) => fc.boolean().map((repeat) => (repeat ? `${new URLSearchParams(fields as Record<string, string>)}&${new URLSearchParams(fields as Record<string, string>)}` : `${new URLSearchParams(fields as Record<string, string>)}`)));

const bodies = fc.oneof(
  fc.record(Object.fromEntries(Object.entries(fieldValues).map(([key, value]) => [key, value])), { requiredKeys: [] }).map((body) => JSON.stringify(body)),
  fc.jsonValue().map((value) => JSON.stringify(value)),
  fc.string({ maxLength: 60 }),
  fc.constantFrom('{', '{"a":', '[1,2', 'null', '""', '{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{}}}'),
  formBodies,
  fc.constantFrom('a=%zz&b=%', '=&&=', 'action'),
);

function requests(targets: FuzzTargets) {
  const uuid = fc.oneof(fc.constantFrom(...targets.userIds, ...targets.variantIds, ...targets.locationIds, targets.app.id), fc.uuid(), fc.constant(randomUUID().toUpperCase()));
  const idSegment = fc.oneof(uuid, oddStrings.map((value) => encodeURIComponent(value)));
  const skuSegment = fc.oneof(fc.constantFrom(...targets.skus), oddStrings.map((value) => encodeURIComponent(value)));
  const path = fc.oneof(
    fc.constantFrom('/api/variants/sku/%E0%A4%A', '/api/users/%', '/api/variants/%zz', '/api/users/profile/%'),
    fc.constantFrom('/api/auth/register', '/api/auth/login', '/api/auth/refresh', '/api/auth/logout', '/api/users/profile', '/api/users/change-password', '/api/users', '/healthz', '/readyz', '/api/variants/product', '/api/variants/sku', '/api/variants', '/api/variants/batch', '/api/events', '/api/webhooks', '/api/stock-adjustments', '/api/reservations'),
    // Version 4: sign-in (sections 18 and 19) and locations (section 21).
    { arbitrary: fc.constantFrom(...PAGE_PATHS, ...OAUTH_JSON_PATHS), weight: 3 },
    fc.constantFrom('/.well-known/openid-configuration', '/.well-known/oauth-authorization-server', '/.well-known/jwks.json', '/oauth/assets/passkey.js'),
    fc.constantFrom('/api/auth/email-code', '/api/auth/login/email-code', '/api/auth/passkey/options', '/api/auth/login/passkey', '/api/users/profile/apps', '/api/locations', '/api/stock-transfers'),
    idSegment.map((id) => `/api/locations/${id}`),
    idSegment.map((id) => `/api/users/profile/apps/${id}`),
    idSegment.map((id) => `/api/reservations/${id}/reallocate`),
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
  /** An authorization request: the seeded app's right parameters, each perhaps replaced by an odd value, dropped or repeated. */
  const authorizationQuery = fc
    .record(
      {
        response_type: fc.oneof(fc.constant('code'), oddStrings),
        client_id: fc.oneof(fc.constant(targets.app.id), uuid, oddStrings),
        redirect_uri: fc.oneof(fc.constant(targets.app.redirectUri), oddStrings),
        scope: fc.oneof(fc.constantFrom('openid', 'openid email profile offline_access'), oddStrings),
        state: oddStrings,
        nonce: oddStrings,
        code_challenge: fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-]{43}$/), oddStrings),
        code_challenge_method: fc.oneof(fc.constantFrom('S256', 'plain'), oddStrings),
        prompt: fc.oneof(fc.constantFrom('none', 'login', 'consent', 'create', 'none login'), oddStrings),
        max_age: fc.oneof(fc.integer({ min: -5, max: 100 }).map(String), oddStrings),
        ui_locales: fc.oneof(fc.constantFrom('de', 'en', 'fr de'), oddStrings),
        login_hint: oddStrings,
        id_token_hint: oddStrings,
        post_logout_redirect_uri: oddStrings,
      },
      { requiredKeys: [] },
    )
    .chain((parameters) => fc.boolean().map((repeat) => `?${new URLSearchParams(parameters as Record<string, string>)}${repeat ? `&${new URLSearchParams(parameters as Record<string, string>)}` : ''}`));
  const query = fc.oneof(
    fc.constant(''),
    authorizationQuery,
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
    { arbitrary: fc.constant('application/x-www-form-urlencoded'), weight: 2 },
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
  // A method no page has (PUT, DELETE…) is the API's 405 problem, as on any path; a page's own errors are pages.
  if (response.statusCode >= 400 && response.statusCode !== 405 && PAGE_PATHS.has(path)) {
    if (!String(response.headers['content-type']).startsWith('text/html')) throw new Error(`${method} ${path}: ${response.statusCode} is not an HTML page`);
    if (/(select |insert |update |node_modules|\.tsx?:\d+)/i.test(response.body)) throw new Error(`${method} ${path}: leaks internals: ${response.body}`);
    return;
  }
  if (response.statusCode >= 400 && OAUTH_JSON_PATHS.has(path) && !String(response.headers['content-type']).startsWith('application/problem+json')) {
    if (response.body.length === 0 && response.headers['www-authenticate']) return;
    const error = (response.json() as { error?: unknown }).error;
    if (typeof error !== 'string' || !OAUTH_ERRORS.has(error)) throw new Error(`${method} ${path}: ${response.statusCode} is neither problem+json nor an OAuth error: ${response.body}`);
    return;
  }
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
