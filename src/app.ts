import { randomUUID } from 'node:crypto';
import fastifyCors from '@fastify/cors';
import fastifyHelmet from '@fastify/helmet';
import fastifyRateLimit from '@fastify/rate-limit';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { registerAccessTokens } from './auth/access-tokens.js';
import { authRoutes } from './auth/auth-routes.js';
import { ensureFirstAdmin } from './auth/bootstrap-admin.js';
import type { Config } from './config.js';
import type { DatabaseHandle } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import type { Database } from './db/tables.js';
import { addAuthentication } from './http/authenticate.js';
import { registerErrorHandler, sendProblem, toAppError } from './http/error-handler.js';
import { AppError } from './http/errors.js';
import { registerNotFoundHandler } from './http/method-not-allowed.js';
import { registerAdminConsole } from './http/admin-console.js';
import { openApiDocument } from './http/openapi.js';
import { operationsRoutes } from './http/operations-routes.js';
import { ProblemSchema } from './http/problem-schema.js';
import { registerValidators } from './http/validation.js';
import { balanceRoutes } from './users/balance-routes.js';
import { userRoutes } from './users/user-routes.js';
import { TokenPairSchema } from './auth/auth-schemas.js';
import { UserSchema } from './users/user-schemas.js';
import { LedgerEntrySchema } from './users/balance-schemas.js';
import { variantRoutes } from './variants/variant-routes.js';
import { schedulePurges } from './db/purge.js';
import { VariantSchema } from './variants/variant-schemas.js';

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    db: Kysely<Database>;
    database: DatabaseHandle;
  }
}

export interface AppOptions {
  config: Config;
  database: DatabaseHandle;
  logger?: FastifyServerOptions['logger'];
  /** Where the generated first-admin password goes; stderr by default. */
  printSecret?: (line: string) => void;
}

const BODY_LIMIT = 64 * 1024;
// Long enough that an overlong {sku} reaches validation (400) instead of missing the route (404).
const MAX_PARAM_LENGTH = 65536;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export const REDACTED_LOG_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  '*.password',
  '*.current_password',
  '*.new_password',
  '*.refresh_token',
  '*.access_token',
  '*.*.password',
  '*.*.refresh_token',
  '*.*.access_token',
];

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config, database } = options;
  const app = Fastify({
    logger: options.logger ?? {
      level: config.logLevel,
      redact: { paths: REDACTED_LOG_PATHS, censor: '[redacted]' },
    },
    bodyLimit: BODY_LIMIT,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // Errors Fastify raises before routing (a malformed percent-encoding in the path).
    frameworkErrors: (error, request, reply) => {
      reply.header('x-request-id', request.id);
      return sendProblem(reply, toAppError(error, request.id));
    },
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.decorate('config', config);
  app.decorate('database', database);
  app.decorate('db', database.db);
  app.addHook('onClose', async () => database.close());

  await migrateToLatest(database.db);
  await ensureFirstAdmin(database.db, { email: config.adminEmail, password: config.adminPassword }, app.log, options.printSecret);
  schedulePurges(app);

  await registerAccessTokens(app, config);
  registerValidators(app);
  registerErrorHandler(app);
  const guardLiteralSegments = registerNotFoundHandler(app, MAX_PARAM_LENGTH);
  app.removeContentTypeParser('text/plain');
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  await app.register(fastifyHelmet, { contentSecurityPolicy: false, global: true });
  if (config.corsOrigins) {
    await app.register(fastifyCors, { origin: config.corsOrigins, exposedHeaders: ['etag', 'location', 'x-request-id', 'retry-after'] });
  }
  const redis = config.redisUrl ? new Redis(config.redisUrl, { connectTimeout: 1000, maxRetriesPerRequest: 1 }) : undefined;
  if (redis) app.addHook('onClose', async () => void redis.disconnect());
  await app.register(fastifyRateLimit, {
    global: true,
    max: config.apiRateLimit,
    timeWindow: 60_000,
    hook: 'preHandler',
    ...(redis ? { redis, nameSpace: 'shop-rate-limit:' } : {}),
    skipOnError: true,
    keyGenerator: (request) => (request.caller ? `caller:${request.caller.id}` : `ip:${request.ip}`),
    errorResponseBuilder: (_request, context) =>
      new AppError(429, 'rate_limited', `Too many requests; retry in ${Math.ceil(context.ttl / 1000)} s.`),
  });

  for (const schema of [ProblemSchema, UserSchema, TokenPairSchema, LedgerEntrySchema, VariantSchema]) app.addSchema(schema);
  await app.register(fastifySwagger, { openapi: openApiDocument(config), refResolver: { buildLocalReference: (json, _base, _fragment, index) => String(json.$id ?? `def-${index}`) } });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs', staticCSP: true });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  await registerAdminConsole(app);
  await app.register(operationsRoutes);
  await app.register(authRoutes, { prefix: '/api/auth' });
  await app.register(
    async (api) => {
      addAuthentication(api);
      await api.register(userRoutes, { prefix: '/users' });
      await api.register(balanceRoutes, { prefix: '/users' });
      await api.register(variantRoutes, { prefix: '/variants' });
    },
    { prefix: '/api' },
  );
  guardLiteralSegments([
    '/api/users/profile',
    '/api/users/change-password',
    '/api/variants/product',
    '/api/variants/product/',
    '/api/variants/sku',
    '/api/variants/sku/',
  ]);
  return app;
}
