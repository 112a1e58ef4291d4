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
        `All amounts are integer minor units of ${config.currency}. Errors are RFC 9457 problem+json with a stable \`code\`.`,
        'Single resources carry `ETag: "<version>"`; PUT and DELETE on one resource honour `If-Match` (412 when stale; ',
        'a missing resource is 404 before If-Match is considered; `*` matches any existing version; weak tags never match).',
        'Lists are keyset-paged: `limit` (1..100), opaque `cursor`, `include_total`. Query strings, like bodies, are closed:',
        'an unknown parameter is a 400 `validation_failed`. Authorisation is checked before the request is validated, so a',
        'caller without the role gets 403 even for a malformed request. Logout always answers 204.',
        'An Authorization header that is not `Bearer …` counts as none (401 `unauthenticated`). Unknown methods on a',
        'known path get 405 before any authentication. Paths are matched exactly: a trailing slash is another path (404).',
        'X-Request-Id is echoed when it is 1..128 characters of [A-Za-z0-9._:-], otherwise a UUID is generated.',
        'Rate limits: login counts per client address and lower-cased email; every other route per authenticated caller',
        '(per address before authentication). Idempotency-Key: a 2xx or 4xx reply is stored and replayed; a 5xx frees the',
        'key for a retry. The console at /admin is a static page over this same API.',
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
    await app.register(fastifySwaggerUi, { routePrefix: '/docs', staticCSP: true });
    app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  },
  { name: 'openapi' },
);
