import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, validationFailed } from './errors.js';
import { MERGE_PATCH_CONTENT_TYPE } from './merge-patch.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route reads its body itself (an upload, an OAuth form): the JSON rules here do not apply. */
    ownBody?: boolean;
    /** The body is optional: none, or an empty one, is read as `{}` (a roll of a client's secret). */
    optionalBody?: boolean;
  }
}

const unsupported = () => new AppError('unsupported_media_type', 'Send the body as application/json.');
const malformed = () => new AppError('malformed_json', 'The body is not valid JSON.');

/** An operation whose table names no body (every GET, most DELETEs, commit, rotate…): its schema has none. */
const takesNoBody = (request: FastifyRequest) => {
  const { schema, config } = request.routeOptions;
  // A literal segment's guard answers 404 or 405 whatever the body.
  return !schema?.body && !config.ownBody && !config.literalSegmentGuard;
};

/**
 * How bodies are read (API.md sections 1 and 10): JSON; `application/merge-patch+json` on a
 * PATCH only (a PUT sending it is 415); and on an operation that takes no body, no body, an
 * empty one whatever its Content-Type (as many HTTP clients send), or `{}`: any other body
 * there is 400 (`malformed_json` when it is not JSON, else `validation_failed`).
 */
export function registerBodyParsers(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  const readJson = (request: FastifyRequest, text: string, done: (error: Error | null, body?: unknown) => void) => {
    if (text === '' && (takesNoBody(request) || request.routeOptions.config.optionalBody)) return done(null, undefined);
    parseJson(request, text, done);
  };
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, readJson);
  app.addContentTypeParser(MERGE_PATCH_CONTENT_TYPE, { parseAs: 'string' }, (request, text, done) => {
    if (request.method !== 'PATCH' && !takesNoBody(request)) return done(unsupported());
    readJson(request, text as string, done);
  });
  // Any other media type: only an operation without a body accepts it, and only empty or `{}`.
  app.addContentTypeParser('*', { parseAs: 'string' }, (request, text, done) => {
    // A literal segment's guard answers 404 or 405 whatever the body is.
    if (request.routeOptions.config.literalSegmentGuard) return done(null, undefined);
    if (text === '' && request.routeOptions.config.optionalBody) return done(null, undefined);
    if (!takesNoBody(request)) return done(unsupported());
    if (text === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text as string));
    } catch {
      done(malformed());
    }
  });
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.body === undefined && request.routeOptions.config.optionalBody) request.body = {};
    if (!takesNoBody(request)) return done();
    // Fastify leaves the body of a GET or HEAD unread; it is read here, by the same rules.
    const unread = (request.method === 'GET' || request.method === 'HEAD') && hasBody(request);
    if (!unread) return done(emptyOrRefused(request.body));
    readRawBody(request, app.initialConfig.bodyLimit ?? 1_048_576).then((text) => {
      if (text === '') return done();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        return done(malformed());
      }
      done(emptyOrRefused(body));
    }, done);
  });
}

const hasBody = (request: FastifyRequest) =>
  (request.headers['content-length'] !== undefined && request.headers['content-length'] !== '0') || request.headers['transfer-encoding'] !== undefined;

/** Nothing, or `{}`, is no body; anything else is refused. */
function emptyOrRefused(body: unknown): Error | undefined {
  if (body === undefined) return undefined;
  const empty = typeof body === 'object' && body !== null && !Array.isArray(body) && Object.keys(body).length === 0;
  return empty ? undefined : validationFailed('/', 'must be empty: this operation takes no body (send none, an empty one, or {})');
}

function readRawBody(request: FastifyRequest, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.raw.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        request.raw.destroy();
        reject(new AppError('payload_too_large', 'The body is larger than the service accepts.'));
        return;
      }
      chunks.push(chunk);
    });
    request.raw.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.raw.on('error', reject);
  });
}
