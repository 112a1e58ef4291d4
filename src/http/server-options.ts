import { randomUUID } from 'node:crypto';
import { LogController, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import type { Config } from '../config.js';
import { answerClientError } from './client-errors.js';
import { toAppError } from './error-handler.js';
import { sendProblem } from './problem-reply.js';
import { requestLoggerFactory } from './request-logger.js';
import { traceFields } from '../tracing.js';
import { withoutSecrets } from '../url-redaction.js';
import { buildSerializerCompiler } from './response-serializers.js';
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
  // An identity provider's credentials (API.md section 20), should a body ever reach a log line.
  '*.client_secret',
  '*.apple_private_key',
  '*.*.client_secret',
  '*.*.apple_private_key',
];

function serializeRequest(request: FastifyRequest) {
  return {
    method: request.method,
    url: withoutSecrets(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}

const trustHops = (hops: number) => (_address: string, hop: number) => hop < hops;

/** The options Fastify is built with: logging, limits, request ids, errors raised before routing. */
export function serverOptions(config: Config, logger?: FastifyServerOptions['logger'], traced = false): FastifyServerOptions {
  return {
    logger:
      logger === false
        ? false
        : {
            level: config.logLevel,
            redact: { paths: REDACTED_LOG_PATHS, censor: '[redacted]' },
            serializers: { req: serializeRequest },
            // With tracing on, each line written inside a span carries its trace_id and span_id.
            ...(traced ? { mixin: traceFields } : {}),
            ...(typeof logger === 'object' ? logger : {}),
          },
    ...(logger === false ? {} : { childLoggerFactory: requestLoggerFactory }),
    // One access-log line per request (http-frame's onResponse), not Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT,
    requestTimeout: config.requestTimeoutMs,
    clientErrorHandler: answerClientError,
    // A hop count trusts that many proxies nearest the service (Fastify's own reading of a number).
    trustProxy: typeof config.trustProxy === 'number' ? trustHops(config.trustProxy) : config.trustProxy,
    // Fastify types this factory after Ajv's pool compiler; it is called with each route part's schema and httpPart.
    schemaController: { compilersFactory: { buildValidator: buildValidatorCompiler as never, buildSerializer: buildSerializerCompiler as never } },
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
