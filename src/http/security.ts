import fastifyCors from '@fastify/cors';
import fastifyHelmet from '@fastify/helmet';
import fastifyRateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { Redis } from 'ioredis';
import type { Config } from '../config.js';
import { AppError } from './errors.js';

export interface SecurityOptions {
  config: Config;
  /** Whose budget a request spends: the authenticated caller, else the client address. */
  rateLimitKey: (request: FastifyRequest) => string;
}

/** Security headers, CORS when origins are configured, and the per-caller rate limit. */
export const securityPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: SecurityOptions) => {
    const { config } = options;
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
      keyGenerator: options.rateLimitKey,
      errorResponseBuilder: (_request, context) =>
        new AppError('rate_limited', `Too many requests; retry in ${Math.ceil(context.ttl / 1000)} s.`),
    });
  },
  { name: 'security' },
);
