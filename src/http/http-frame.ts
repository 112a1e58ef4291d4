import type { FastifyInstance, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { registerErrorHandler } from './error-handler.js';
import { deleteExpiredIdempotencyKeys } from './idempotency-key-repository.js';
import { methodNotAllowedPlugin } from './method-not-allowed.js';

const HOUR_MS = 60 * 60 * 1000;

/**
 * What every request goes through, whatever the area: problem+json errors, 404 and
 * 405, the request id on every reply, and `{id}` path parameters read in any letter case.
 */
export const httpFramePlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { maxParamLength: number }) => {
    registerErrorHandler(app);
    await app.register(methodNotAllowedPlugin, { maxParamLength: options.maxParamLength });
    app.removeContentTypeParser('text/plain');
    app.addHook('onRequest', async (request, reply) => {
      reply.header('x-request-id', request.id);
    });
    // Identifiers are UUIDs, returned lower-case and read in any case: lower-cased once, here.
    app.addHook('preHandler', async (request: FastifyRequest) => {
      const params = request.params as Record<string, unknown> | undefined;
      if (params && typeof params.id === 'string') params.id = params.id.toLowerCase();
    });
    app.jobs.add({ name: 'purge-idempotency-keys', everyMs: HOUR_MS, run: () => deleteExpiredIdempotencyKeys(app.db) });
  },
  { name: 'http-frame', dependencies: ['jobs', 'database'] },
);
