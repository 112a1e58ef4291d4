import type { FastifyInstance, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The reply carries a token or a secret: no cache may keep it. */
    noStore?: boolean;
  }
}
import fastifyPlugin from 'fastify-plugin';
import { registerErrorHandler } from './error-handler.js';
import { sendProblem } from './problem-reply.js';
import { deleteExpiredIdempotencyKeys } from './idempotency-key-repository.js';
import { AppError } from './errors.js';

const HOUR_MS = 60 * 60 * 1000;

/**
 * What every request goes through, whatever the area: problem+json errors, the request id,
 * a deadline for the body on every reply, and `{id}` path parameters read in any letter case.
 */
export const httpFramePlugin = fastifyPlugin(
  async (app: FastifyInstance) => {
    registerErrorHandler(app);
    app.removeContentTypeParser('text/plain');
    // Node's own requestTimeout stops watching once the headers are in, so a body sent a byte at
    // a time would hold the connection for as long as the client likes.
    app.addHook('onRequest', async (request, reply) => {
      if (request.raw.complete) return;
      const timer = setTimeout(() => {
        if (request.raw.complete || reply.sent) return;
        reply.raw.once('finish', () => request.raw.socket?.destroy());
        sendProblem(reply.header('connection', 'close'), new AppError('request_timeout', 'The request body did not arrive in time.'));
      }, app.config.requestTimeoutMs);
      timer.unref();
      request.raw.once('end', () => clearTimeout(timer));
      request.raw.once('close', () => clearTimeout(timer));
    });
    app.addHook('onRequest', async (request, reply) => {
      reply.header('x-request-id', request.id);
      if (request.routeOptions.config.noStore) reply.header('cache-control', 'no-store');
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
