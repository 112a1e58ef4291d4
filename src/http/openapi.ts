import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { Config } from '../config.js';
import { ProblemSchema } from './problem-schema.js';
import type { FastifyContextConfig } from 'fastify';
import { withTextRules } from './text-rules.js';
import { setPageHeaders } from './security.js';
import { DOCS_PAGE_CSS, withViewport } from './docs-page.js';
import { readFileSync } from 'node:fs';

/** The document's version is the package's: src/http and dist/http both sit two levels below it. */
const PACKAGE_VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/**
 * What /docs opens on: the service's own introduction (given by the app, which knows the
 * areas), then the conventions every operation shares, as a list a reader can scan.
 */
function describeDocument(config: Config, introduction: string): string {
  return [
    introduction,
    '',
    '**Conventions every operation shares**',
    '',
    ...[
      `Amounts are integer minor units of ${config.currency}.`,
      'Errors are RFC 9457 problem+json with a stable `code` (an enum below, in Problem); a validation error lists every problem of the request in `errors` (a JSON Pointer and a plain message each).',
      'Single resources carry `ETag: "<version>"`. PUT, PATCH and DELETE on one resource honour `If-Match`: a stale tag is 412 and changes nothing; a missing resource is 404 before If-Match is considered; `*` matches any existing version; weak tags never match; an empty If-Match is the same as none. A GET with `If-None-Match` naming the current ETag is 304 without a body.',
      "Every reply to a request with an Authorization header is `Cache-Control: no-store`: it is that caller's, and two callers' resources share URLs and ETags (every profile starts at `\"1\"`), so a browser that kept one would show it to the next person signed in. A client that keeps an ETag itself still gets 304.",
      'PATCH is a JSON merge patch (RFC 7396), sent as application/merge-patch+json or application/json; `{}` changes nothing. `application/merge-patch+json` is accepted by PATCH only (415 elsewhere).',
      'Names, reasons and descriptions are stored trimmed; a blank one is a 400, and so is a NUL character in any string.',
      'Lists are keyset-paged: `limit` (1..100, default 20), opaque `cursor`, `include_total`; walking every page returns every row once.',
      'Query strings, like bodies, are closed: an unknown parameter or field is a 400 `validation_failed`.',
      'Authorisation is checked before the request is validated, so a caller without the role gets 403 even for a malformed request. An Authorization header that is not `Bearer …` counts as none (401 `unauthenticated`). Logout always answers 204.',
      'An unknown path is 404 and a method the path does not serve is 405 with `Allow`, both before any authentication. Paths are matched exactly: a trailing slash is another path (404).',
      "Every API reply carries `Strict-Transport-Security`, `X-Content-Type-Options: nosniff`, `X-Frame-Options: DENY`, `Content-Security-Policy: default-src 'none'; frame-ancestors 'none'`, `Referrer-Policy: no-referrer`, `Cross-Origin-Resource-Policy: same-origin` and `X-Permitted-Cross-Domain-Policies: none` (OWASP's REST Security Cheat Sheet). The two HTML pages (this reference and the console) carry Helmet's headers for pages instead, with a policy of their own and X-Frame-Options to match it.",
      'X-Request-Id is echoed when it is 1..128 characters of [A-Za-z0-9._:-], otherwise a UUID is generated.',
      "Rate limits (429 with Retry-After): logins, and every other check of an account's password or second factor, per client address and lower-cased email; every authenticated request per caller; every request without a valid token per client address; health probes never. An IPv6 client counts by its /64.",
      'Idempotency-Key: a 2xx or 4xx reply (status, ETag, Location, body) is stored for 24 h and replayed with `Idempotent-Replayed: true`; a 5xx frees the key for a retry.',
      "An operation that takes no body (every GET, most DELETEs, a reservation's commit or release, key rotation, a verification resend, a webhook ping, a delivery retry) accepts no body, an empty body whatever its Content-Type, or `{}`; any other body is 400 (`malformed_json` when it is not JSON).",
    ].map((rule) => `- ${rule}`),
  ].join('\n');
}

/** The top of the OpenAPI document; the paths come from the route schemas. */
function openApiDocument(config: Config, options: { scopes: Record<string, string>; webhooks: Record<string, unknown>; introduction: string }) {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Shop accounts and variants API',
      version: PACKAGE_VERSION,
      license: { name: 'Proprietary: the deploying shop decides' },
      description: describeDocument(config, options.introduction),
    },
    servers: [{ url: config.publicUrl, description: 'This deployment (PUBLIC_URL)' }],
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http' as const,
          scheme: 'bearer',
          description: "A user's access token (a JWT from a login), an API client's access token, or an API client's secret (`shop_sk_…`).",
        },
        oauth2: {
          type: 'oauth2' as const,
          description: 'API clients: the client credentials grant; the token carries the scopes granted.',
          flows: { clientCredentials: { tokenUrl: `${config.publicUrl}/api/oauth/token`, scopes: options.scopes } },
        },
      },
    },
    security: [{ bearerAuth: [] }],
    webhooks: options.webhooks,
    tags: [
      { name: 'auth', description: 'Tokens' },
      { name: 'users', description: 'Accounts' },
      { name: 'balance', description: 'Store credit and its ledger' },
      { name: 'variants', description: 'Product variants' },
      { name: 'inventory', description: 'Stock movements and adjustments' },
      { name: 'locations', description: 'The places stock is kept; one of them is the default' },
      { name: 'events', description: 'The audit log' },
      { name: 'webhooks', description: 'Signed deliveries of events to other systems' },
      { name: 'clients', description: 'API clients: other services, with scopes; the OAuth token endpoint' },
      { name: 'oauth', description: 'Customer sign-in: the authorization server (OAuth 2.1, OpenID Connect) of the shop\'s storefronts and apps, and its hosted pages' },
      { name: 'mfa', description: 'Second factors: authenticator apps (TOTP), passkeys, recovery codes; step-up' },
      { name: 'privacy', description: 'Data exports, erasure, self-deletion; retention' },
      { name: 'imports', description: 'Catalogue files: variant imports from CSV or JSON lines, their error reports, and exports' },
      { name: 'operations', description: 'Health and readiness' },
    ],
  };
}

/**
 * The reference page's policy: its own scripts only. Swagger UI sets style attributes from its
 * scripts, hence 'unsafe-inline' for styles alone.
 */
const DOCS_CSP =
  "default-src 'self'; base-uri 'self'; font-src 'self' https: data:; frame-ancestors 'self'; img-src 'self' data: validator.swagger.io; " +
  "object-src 'none'; script-src 'self'; script-src-attr 'none'; style-src 'self' https: 'unsafe-inline'";

/**
 * What the service tells of who may call a route, from the route's config (the admission's rule,
 * which this ground floor does not know): a sentence for the description and any extra keys.
 */
export type DescribeAccess = (config: FastifyContextConfig | undefined) => { words: string; extensions: Record<string, unknown> } | undefined;

function withAccess(describe: DescribeAccess | undefined, config: FastifyContextConfig | undefined, description: string | undefined) {
  const access = describe?.(config);
  if (!access) return {};
  return { description: description ? `${description}\n\n${access.words}` : access.words, ...access.extensions };
}

/**
 * /openapi.json and /docs, generated from the route schemas. Register it before any route:
 * it collects them as they are added. Areas add their shared schemas with `app.addSchema`.
 */
export const openApiPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { config: Config; describeAccess?: DescribeAccess; scopes?: Record<string, string>; webhooks?: Record<string, unknown>; introduction?: string }) => {
    app.addSchema(ProblemSchema);
    await app.register(fastifySwagger, {
      openapi: openApiDocument(options.config, { scopes: options.scopes ?? {}, webhooks: options.webhooks ?? {}, introduction: options.introduction ?? '' }),
      refResolver: { buildLocalReference: (json, _base, _fragment, index) => String(json.$id ?? `def-${index}`) },
      // The document shows the rules the validator applies (see text-rules.ts), not less.
      transform: ({ schema, url, route }) => ({
        schema: schema && {
          ...schema,
          ...(schema.body ? { body: withTextRules(schema.body) } : {}),
          ...(schema.querystring ? { querystring: withTextRules(schema.querystring) } : {}),
          ...(schema.params ? { params: withTextRules(schema.params) } : {}),
          ...withAccess(options.describeAccess, route.config as FastifyContextConfig | undefined, (schema as { description?: string }).description),
        },
        url,
      }),
    });
    await app.register(async (docs) => {
      // `upgrade-insecure-requests` only where the page came over https: over plain http (a
      // service reached by its LAN name) it would make the browser fetch the page's own
      // scripts over https, which nothing serves, and the page would stay blank.
      docs.addHook('onSend', async (request, reply, payload) => {
        setPageHeaders(reply, request.protocol === 'https' ? `${DOCS_CSP}; upgrade-insecure-requests` : DOCS_CSP);
        // The page itself (a string; its scripts and styles are streams): it gains a viewport for phones (docs-page.ts).
        return typeof payload === 'string' && String(reply.getHeader('content-type')).startsWith('text/html') ? withViewport(payload) : payload;
      });
      await docs.register(fastifySwaggerUi, {
        routePrefix: '/docs',
        staticCSP: false,
        // The page's own name, no Swagger branding bar above the introduction, and a layout for phones.
        theme: { title: 'Shop accounts API', css: [{ filename: 'theme.css', content: DOCS_PAGE_CSS }] },
      });
    });
    app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  },
  { name: 'openapi' },
);
