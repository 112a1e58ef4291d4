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
import { MERGE_PATCH_CONTENT_TYPE } from './merge-patch.js';

const HOUR_MS = 60 * 60 * 1000;

/**
 * What every request goes through, whatever the area: problem+json errors, the request id,
 * a deadline for the body on every reply, and `{id}` path parameters read in any letter case.
 */
export const httpFramePlugin = fastifyPlugin(
  async (app: FastifyInstance) => {
    registerErrorHandler(app);
    app.removeContentTypeParser('text/plain');
    // PATCH bodies may say what they are (RFC 7396); they are JSON all the same.
    app.addContentTypeParser(MERGE_PATCH_CONTENT_TYPE, { parseAs: 'string' }, app.getDefaultJsonParser('error', 'error'));
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
    app.addHook('onResponse', async (request, reply) => {
      request.log.info({ req: request, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime }, 'request completed');
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
    // Conditional reads (RFC 9110 §13.1.2): a GET whose If-None-Match names the current ETag gets 304.
    app.addHook('onSend', async (request, reply, payload) => {
      if ((request.method !== 'GET' && request.method !== 'HEAD') || reply.statusCode !== 200) return payload;
      const etag = reply.getHeader('etag');
      const wanted = request.headers['if-none-match'];
      if (typeof etag !== 'string' || typeof wanted !== 'string') return payload;
      const tags = wanted.split(',').map((tag) => tag.trim().replace(/^W\//, ''));
      if (!tags.includes('*') && !tags.includes(etag)) return payload;
      reply.code(304).removeHeader('content-type').removeHeader('content-length');
      return null;
    });
    app.jobs.add({ name: 'purge-idempotency-keys', everyMs: HOUR_MS, run: () => deleteExpiredIdempotencyKeys(app.db) });
  },
  { name: 'http-frame', dependencies: ['jobs', 'database'] },
);
