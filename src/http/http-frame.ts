import type { FastifyInstance, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The reply carries a token or a secret: no cache may keep it. */
    noStore?: boolean;
  }
}
import fastifyPlugin from 'fastify-plugin';
import type { DatabaseHandle } from '../db/database.js';
import { registerErrorHandler } from './error-handler.js';
import { sendProblem } from './problem-reply.js';
import { deleteExpiredIdempotencyKeys } from './idempotency-key-repository.js';
import { AppError } from './errors.js';
import { registerBodyParsers } from './body-parsers.js';
import { withoutSecrets } from '../url-redaction.js';
import type { JobRunner } from '../jobs/job-runner.js';

const HOUR_MS = 60 * 60 * 1000;

/**
 * What every request goes through, whatever the area: problem+json errors, the request id,
 * a deadline for the body on every reply, and `{id}` path parameters read in any letter case.
 */
export const httpFramePlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { database: DatabaseHandle; jobs: JobRunner }) => {
    // The access log's fields hold no secret (the URL's secret-looking query values are redacted
    // by withoutSecrets), so its lines skip the redaction paths, which walk every field of a
    // line for wildcards and were most of the line's cost in the profile.
    const accessLog = app.log.child({}, { redact: { paths: [] } });
    registerErrorHandler(app);
    registerBodyParsers(app);
    // The hooks every request runs are synchronous (done-callback style): an async hook costs a
    // promise and a turn of the microtask queue per request, which showed in the profile.
    app.addHook('onRequest', (request, reply, done) => {
      reply.header('x-request-id', request.id);
      // A reply to a caller is that caller's (OWASP: personal data is not stored). Kept, a browser
      // revalidates it with its ETag under the next person's token: their profile is "1" too,
      // the 304 comes, and the browser shows the first person's (Chromium does so despite
      // `Vary: Authorization`). Conditional requests a client makes itself work as before.
      if (request.routeOptions.config.noStore || request.headers.authorization !== undefined) reply.header('cache-control', 'no-store');
      // Node's own requestTimeout stops watching once the headers are in, so a body sent a byte
      // at a time would hold the connection for as long as the client likes. A request without
      // Content-Length or Transfer-Encoding has no body (RFC 9112 §6.3): nothing to watch.
      const hasBody = request.headers['content-length'] !== undefined || request.headers['transfer-encoding'] !== undefined;
      if (!hasBody || request.raw.complete) return done();
      const timer = setTimeout(() => {
        if (request.raw.complete || reply.sent) return;
        reply.raw.once('finish', () => request.raw.socket?.destroy());
        sendProblem(reply.header('connection', 'close'), new AppError('request_timeout', 'The request body did not arrive in time.'));
      }, app.config.requestTimeoutMs);
      timer.unref();
      request.raw.once('end', () => clearTimeout(timer));
      request.raw.once('close', () => clearTimeout(timer));
      done();
    });
    // The access log, one line a request, with the request id as a field: a request that logs
    // nothing else makes no pino child of its own. Its fields are flat values: a nested `req`
    // object, serialized and stringified for every line, cost most of a line (bench/README.md).
    app.addHook('onResponse', (request, reply, done) => {
      accessLog.info(
        { reqId: request.id, method: request.method, url: withoutSecrets(request.url), statusCode: reply.statusCode, remoteAddress: request.ip, responseTime: reply.elapsedTime },
        'request completed',
      );
      done();
    });
    // Identifiers are UUIDs, returned lower-case and read in any case: lower-cased once, here.
    app.addHook('preHandler', (request: FastifyRequest, _reply, done) => {
      const params = request.params as Record<string, unknown> | undefined;
      if (params && typeof params.id === 'string') params.id = params.id.toLowerCase();
      done();
    });
    // Conditional reads (RFC 9110 §13.1.2): a GET whose If-None-Match names the current ETag gets 304.
    app.addHook('onSend', (request, reply, payload, done) => {
      const wanted = request.headers['if-none-match'];
      if (typeof wanted !== 'string' || (request.method !== 'GET' && request.method !== 'HEAD') || reply.statusCode !== 200) return done(null, payload);
      const etag = reply.getHeader('etag');
      if (typeof etag !== 'string') return done(null, payload);
      const tags = wanted.split(',').map((tag) => tag.trim().replace(/^W\//, ''));
      if (!tags.includes('*') && !tags.includes(etag)) return done(null, payload);
      reply.code(304).removeHeader('content-type').removeHeader('content-length');
      done(null, null);
    });
    options.jobs.add({ name: 'purge-idempotency-keys', everyMs: HOUR_MS, run: () => deleteExpiredIdempotencyKeys(options.database.db) });
  },
  { name: 'http-frame', dependencies: ['database'] },
);
