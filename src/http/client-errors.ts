import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { AppError } from './errors.js';
import { PROBLEM_CONTENT_TYPE, problemBody } from './problem-reply.js';

/** What Node's parser reports, as the problem a client can read. */
function problemFor(error: NodeJS.ErrnoException): AppError {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AppError('request_timeout', 'The request did not arrive in time.');
    case 'HPE_HEADER_OVERFLOW':
      return new AppError('headers_too_large', 'The request line and headers are over 16 KiB.');
    default:
      return new AppError('malformed_request', 'The request line or headers cannot be parsed.');
  }
}

/**
 * Errors Node raises before Fastify sees a request (a header block over 16 KiB, a bare CR, an
 * unknown method token, a body that never finishes arriving): answered as problem+json with a
 * request id, like every other error, wherever the socket can still take an answer.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    const problem = problemFor(error);
    const body = JSON.stringify(problemBody(problem));
    socket.write(
      `HTTP/1.1 ${problem.statusCode} ${STATUS_CODES[problem.statusCode]}\r\n` +
        `Content-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${randomUUID()}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
