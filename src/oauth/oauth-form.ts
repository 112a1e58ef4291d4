import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { problemResponses } from '../http/problem-schema.js';
import { toAppError } from '../http/error-handler.js';
import { sendProblem } from '../http/problem-reply.js';
import type { ClientCredentials } from './client-authentication.js';
import { OAuthError } from './oauth-errors.js';

/**
 * The HTTP side of the authorization server's form endpoints (token, revocation, introspection):
 * the form, the client's credentials in it or in HTTP Basic, and errors in RFC 6749 §5.2's shape.
 */
export const FORM = 'application/x-www-form-urlencoded';

const BASIC_CHALLENGE = { 'www-authenticate': 'Basic realm="shop-accounts", charset="UTF-8"' };

/** The form's parameters of these names, each at most once (RFC 6749 §3.2); unknown ones are ignored. */
export function readForm(text: string, names: readonly string[]): Record<string, string> {
  const form = new URLSearchParams(text);
  const parameters: Record<string, string> = {};
  for (const name of names) {
    const values = form.getAll(name);
    if (values.length > 1) throw new OAuthError('invalid_request', `${name} is given more than once.`, 400);
    if (values[0] !== undefined) parameters[name] = values[0];
  }
  return parameters;
}

/**
 * HTTP Basic (RFC 6749 §2.3.1: the id and secret form-encoded, then joined by a colon), or the
 * form's fields; both at once is a fault. A public app sends its `client_id` alone (an empty secret).
 */
export function credentialsOf(request: FastifyRequest, form: Record<string, string>): ClientCredentials | undefined {
  const header = request.headers.authorization;
  const fromForm = form.client_id !== undefined || form.client_secret !== undefined;
  if (header !== undefined) {
    if (fromForm) throw new OAuthError('invalid_request', 'Authenticate the client once: with HTTP Basic or with the form, not both.', 400);
    const match = /^Basic +([A-Za-z0-9+/]+=*) *$/i.exec(header);
    const decoded = match ? Buffer.from(match[1]!, 'base64').toString('utf8') : '';
    const colon = decoded.indexOf(':');
    if (colon < 0) throw new OAuthError('invalid_client', 'The Authorization header is not HTTP Basic credentials.', 401, BASIC_CHALLENGE);
    try {
      return { clientId: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')), clientSecret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' ')), viaBasic: true };
    } catch {
      throw new OAuthError('invalid_client', 'The HTTP Basic credentials are not form-encoded.', 401, BASIC_CHALLENGE);
    }
  }
  if (!fromForm) return undefined;
  return { clientId: form.client_id ?? '', clientSecret: form.client_secret ?? '', viaBasic: false };
}

/**
 * In the context of a form endpoint: its body parsed as a form of these parameters, and every
 * error (the schema's, a rate limit, a wrong client) answered as RFC 6749 §5.2 JSON with
 * `Cache-Control: no-store`, because OAuth libraries read that shape.
 */
export function useOAuthForm(app: FastifyInstance, names: readonly string[]): void {
  app.addContentTypeParser(FORM, { parseAs: 'string' }, (_request, text, done) => {
    try {
      done(null, readForm(text as string, names));
    } catch (error) {
      done(error as Error);
    }
  });
  app.setErrorHandler(async (error, request, reply) => {
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    if (error instanceof OAuthError) return reply.code(error.status).headers(error.headers).send({ error: error.error, error_description: error.description });
    const problem = toAppError(error as never, request.id);
    if (problem.code === 'rate_limited') return reply.code(429).headers(problem.headers ?? {}).send({ error: 'rate_limited', error_description: problem.detail });
    if (problem.statusCode < 500) return reply.code(400).send({ error: 'invalid_request', error_description: problem.detail });
    return sendProblem(reply, problem);
  });
}

/** The form a route reads, once it is sure it was a form (not JSON). */
export function formOf(request: FastifyRequest): Record<string, string> {
  if (!request.headers['content-type']?.toLowerCase().startsWith(FORM)) throw new OAuthError('invalid_request', `Send the request as ${FORM}.`, 400);
  return request.body as Record<string, string>;
}

export const OAuthErrorSchema = Type.Object({
  error: Type.String({
    description: 'RFC 6749 §5.2: invalid_request, invalid_client, invalid_grant, unauthorized_client, unsupported_grant_type, invalid_scope; insufficient_scope; rate_limited (429).',
  }),
  error_description: Type.String(),
});

/** A reply of RFC 6749 §5.2's shape, for a route's `response`. */
export const oauthError = (description: string, headers?: Record<string, unknown>) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema: OAuthErrorSchema } },
});

/**
 * The errors every endpoint that authenticates a client answers (token, revocation,
 * introspection): RFC 6749 §5.2 JSON for a bad request (`invalid_request` and, per endpoint,
 * `badRequest`), a client not authenticated and the address's budget; the API's problems for
 * the rest (a body too large, a media type not a form).
 */
export const clientEndpointErrors = (badRequest: string) => ({
  400: oauthError(badRequest),
  401: oauthError('invalid_client.', { 'www-authenticate': { type: 'string', description: '`Basic realm="shop-accounts"` when HTTP Basic was used.' } }),
  ...problemResponses(),
  429: oauthError('rate_limited.', { 'retry-after': { type: 'integer', description: 'Seconds until the budget refills.' } }),
});
