import { randomUUID } from 'node:crypto';
import type { FastifyServerOptions } from 'fastify';
import type { Config } from '../config.js';
import { toAppError } from './error-handler.js';
import { sendProblem } from './problem-reply.js';
import { buildValidatorCompiler } from './validation.js';

const BODY_LIMIT = 64 * 1024;
// Long enough that an overlong {sku} reaches validation (400) instead of missing the route (404).
export const MAX_PARAM_LENGTH = 65536;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

const REDACTED_LOG_PATHS = [
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

/** The options Fastify is built with: logging, limits, request ids, errors raised before routing. */
export function serverOptions(config: Config, logger?: FastifyServerOptions['logger']): FastifyServerOptions {
  return {
    logger: logger ?? {
      level: config.logLevel,
      redact: { paths: REDACTED_LOG_PATHS, censor: '[redacted]' },
    },
    bodyLimit: BODY_LIMIT,
    // Fastify types this factory after Ajv's pool compiler; it is called with each route part's schema and httpPart.
    schemaController: { compilersFactory: { buildValidator: buildValidatorCompiler as never } },
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
  };
}
