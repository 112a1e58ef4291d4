import { STATUS_CODES } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { AppError } from './errors.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';

/** RFC 9457 problem details for an error; `detail` is always present. */
export function problemBody(error: AppError) {
  return {
    type: 'about:blank',
    title: STATUS_CODES[error.statusCode] ?? 'Error',
    status: error.statusCode,
    detail: error.detail,
    code: error.code,
    ...(error.errors ? { errors: error.errors } : {}),
    ...error.members,
  };
}

export function sendProblem(reply: FastifyReply, error: AppError): FastifyReply {
  if (error.headers) reply.headers(error.headers);
  return reply.code(error.statusCode).type(PROBLEM_CONTENT_TYPE).send(problemBody(error));
}
