import fastifyCors from '@fastify/cors';
import fastifyHelmet from '@fastify/helmet';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { Config } from '../config.js';
import { rateLimitPlugin } from './rate-limit.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Health probes and the metrics scrape are never rate-limited. */
    unlimited?: boolean;
  }
  interface FastifyRequest {
    /** Set once the request has spent from some rate-limit budget. */
    rateLimitCounted?: boolean;
  }
}

/** Spends one request from the client address's budget (requests without a valid token). */
export async function spendAnonymous(app: FastifyInstance, request: FastifyRequest): Promise<void> {
  if (request.rateLimitCounted || request.routeOptions.config.unlimited) return;
  request.rateLimitCounted = true;
  await app.rateLimiter.spend(`ip:${request.ip}`, app.config.apiRateLimit);
}

/**
 * Security headers, CORS when origins are configured, and the per-address budget: every
 * request that does not spend an authenticated caller's budget (see the authenticate hook)
 * spends its client address's, whatever route it reaches, unknown ones included.
 */
export const securityPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { config: Config }) => {
    const { config } = options;
    await app.register(fastifyHelmet, { contentSecurityPolicy: false, global: true });
    if (config.corsOrigins) {
      await app.register(fastifyCors, { origin: config.corsOrigins, exposedHeaders: ['etag', 'location', 'x-request-id', 'retry-after'] });
    }
    await app.register(rateLimitPlugin, { redisUrl: config.redisUrl });
    app.addHook('onRequest', async (request) => {
      if (!request.headers.authorization || request.is404) await spendAnonymous(app, request);
    });
    // A request with a token that no authenticate hook looked at (auth routes, unknown paths).
    app.addHook('preHandler', async (request) => spendAnonymous(app, request));
  },
  { name: 'security' },
);
