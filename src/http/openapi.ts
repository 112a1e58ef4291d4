import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { Config } from '../config.js';
import { ProblemSchema } from './problem-schema.js';
import { withTextRules } from './text-rules.js';

/** The top of the OpenAPI document; the paths come from the route schemas. */
function openApiDocument(config: Config) {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Shop accounts and variants API',
      version: '0.2.0',
      license: { name: 'Proprietary: the deploying shop decides' },
      description: [
        'Users (profile, password, role, status, store-credit balance) and product variants of an online shop.',
        `All amounts are integer minor units of ${config.currency}. Errors are RFC 9457 problem+json with a stable \`code\`,`,
        'and a validation error lists every problem of the request in `errors` (a JSON Pointer and a plain message each).',
        'Single resources carry `ETag: "<version>"`. PUT, PATCH and DELETE on one resource honour `If-Match`: a stale tag',
        'is 412 and changes nothing; a missing resource is 404 before If-Match is considered; `*` matches any existing',
        'version; weak tags never match; an empty If-Match is the same as none. A GET with `If-None-Match` naming the',
        'current ETag is 304 without a body. PATCH is a JSON merge patch (RFC 7396), sent as application/merge-patch+json',
        'or application/json; `{}` changes nothing. Names, reasons and descriptions are stored trimmed; a blank one is a',
        '400, and so is a NUL character in any string. Lists are keyset-paged: `limit` (1..100, default 20), opaque',
        '`cursor`, `include_total`; walking every page returns every row once. Query strings, like bodies, are closed: an',
        'unknown parameter is a 400 `validation_failed`. Authorisation is checked before the request is validated, so a',
        'caller without the role gets 403 even for a malformed request. Logout always answers 204. An Authorization',
        'header that is not `Bearer …` counts as none (401 `unauthenticated`). An unknown path is 404 and a method the',
        'path does not serve is 405 with `Allow`, both before any authentication. Paths are matched exactly: a trailing',
        'slash is another path (404). X-Request-Id is echoed when it is 1..128 characters of [A-Za-z0-9._:-], otherwise',
        'a UUID is generated. Rate limits (429 with Retry-After): logins per client address and lower-cased email; every',
        'authenticated request per caller; every request without a valid token per client address; health probes never.',
        'Idempotency-Key: a 2xx or 4xx reply (status, ETag, Location, body) is stored for 24 h and replayed; a 5xx frees',
        'the key for a retry. The console at /admin is a static page over this same API.',
      ].join(' '),
    },
    servers: [{ url: config.publicUrl, description: 'This deployment (PUBLIC_URL)' }],
    components: {
      securitySchemes: { bearerAuth: { type: 'http' as const, scheme: 'bearer', bearerFormat: 'JWT' } },
    },
    security: [{ bearerAuth: [] }],
    tags: [
      { name: 'auth', description: 'Tokens' },
      { name: 'users', description: 'Accounts' },
      { name: 'balance', description: 'Store credit and its ledger' },
      { name: 'variants', description: 'Product variants' },
      { name: 'inventory', description: 'Stock movements and adjustments' },
      { name: 'events', description: 'The audit log' },
      { name: 'webhooks', description: 'Signed deliveries of events to other systems' },
      { name: 'operations', description: 'Health and readiness' },
    ],
  };
}

/**
 * /openapi.json and /docs, generated from the route schemas. Register it before any route:
 * it collects them as they are added. Areas add their shared schemas with `app.addSchema`.
 */
export const openApiPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { config: Config }) => {
    app.addSchema(ProblemSchema);
    await app.register(fastifySwagger, {
      openapi: openApiDocument(options.config),
      refResolver: { buildLocalReference: (json, _base, _fragment, index) => String(json.$id ?? `def-${index}`) },
      // The document shows the rules the validator applies (see text-rules.ts), not less.
      transform: ({ schema, url }) => ({
        schema: schema && {
          ...schema,
          ...(schema.body ? { body: withTextRules(schema.body) } : {}),
          ...(schema.querystring ? { querystring: withTextRules(schema.querystring) } : {}),
          ...(schema.params ? { params: withTextRules(schema.params) } : {}),
        },
        url,
      }),
    });
    await app.register(fastifySwaggerUi, {
      routePrefix: '/docs',
      staticCSP: true,
      // Swagger UI sets style attributes from its scripts; scripts stay limited to 'self'.
      transformStaticCSP: (header) => header.replace("style-src 'self' https:", "style-src 'self' https: 'unsafe-inline'"),
    });
    app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  },
  { name: 'openapi' },
);
