import { STATUS_CODES } from 'node:http';
import type { ErrorObject } from 'ajv';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, codeForStatus, invalidParameter, unavailable } from './errors.js';
import { sendProblem } from './problem-reply.js';
import { describeValidationErrors } from './validation-messages.js';

const DATABASE_UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE', 'EHOSTUNREACH',
  '57P01', '57P02', '57P03', '57014', '53300', '08000', '08001', '08003', '08004', '08006',
]);

/** Turns whatever was thrown into an AppError; anything unrecognised becomes 500 `internal`. */
export function toAppError(error: FastifyError & { validationContext?: string }, requestId: string): AppError {
  if (error instanceof AppError) return error;
  if (error.validation) {
    const problems = describeValidationErrors(error.validation as ErrorObject[]);
    if (error.validationContext === 'params') {
      return new AppError('invalid_parameter', 'A path parameter is malformed.', problems);
    }
    // A cursor is opaque: one the service did not issue is a malformed parameter, whatever rule it breaks.
    if (error.validationContext === 'querystring' && problems.every((problem) => problem.path === '/cursor')) {
      return new AppError('invalid_parameter', 'The cursor is malformed.', problems);
    }
    return new AppError('validation_failed', 'The request does not match the schema.', problems);
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('unsupported_media_type', 'Send the body as application/json.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload_too_large', 'The body is larger than the service accepts.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('malformed_json', 'The body is not valid JSON.');
    case 'FST_ERR_BAD_URL':
      return invalidParameter('The URL is malformed.');
  }
  if (error instanceof SyntaxError && error.statusCode === 400) {
    return new AppError('malformed_json', 'The body is not valid JSON.');
  }
  if (isDatabaseUnavailable(error)) return unavailable();
  const status = error.statusCode;
  if (status && status >= 400 && status < 500) return new AppError(codeForStatus(status), STATUS_CODES[status] ?? 'Bad request');
  return new AppError('internal', `An unexpected error occurred (request id ${requestId}).`);
}

function isDatabaseUnavailable(error: unknown): boolean {
  const candidate = error as { code?: string; message?: string } | undefined;
  if (!candidate) return false;
  if (candidate.code && DATABASE_UNAVAILABLE_CODES.has(candidate.code)) return true;
  const message = candidate.message ?? '';
  return (
    message.includes('timeout exceeded when trying to connect') ||
    message === 'Query read timeout' ||
    message.includes('Connection terminated') ||
    message.includes('connect ECONNREFUSED') ||
    (error instanceof AggregateError && error.errors.some(isDatabaseUnavailable))
  );
}

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * A check that must speak before any other error of the request, when it has not run yet
     * (the caller check that travels with a read's data): its own error replaces the request's.
     */
    checkBeforeError?: (() => Promise<unknown>) | undefined;
  }
}

export function registerErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler(async (original: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    let error = original;
    let appError = toAppError(error, request.id);
    // A failure of the service itself tells the caller nothing about the data, and when the
    // database is what failed, a second statement would only double the wait.
    if (request.checkBeforeError && appError.statusCode < 500) {
      try {
        await request.checkBeforeError();
      } catch (refusal) {
        error = refusal as FastifyError;
        appError = toAppError(error, request.id);
      }
    }
    if (appError.statusCode >= 500) {
      request.log.error({ err: error }, 'request failed');
    } else if (!(error instanceof AppError)) {
      request.log.info({ code: appError.code, reason: error.message }, 'request rejected');
    }
    return sendProblem(reply, appError);
  });
}
