import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { addressKey } from '../http/client-address.js';
import { toAppError } from '../http/error-handler.js';
import { problemResponses } from '../http/problem-schema.js';
import { sendProblem } from '../http/problem-reply.js';
import { PUBLIC, SCOPE_NAMES } from '../sessions/access-rule.js';
import type { TokenIssuer } from '../sessions/token-issuer.js';
import { grantClientToken, OAuthError, type ClientCredentials } from '../clients/token-service.js';

const FORM = 'application/x-www-form-urlencoded';
const PARAMETERS = ['grant_type', 'scope', 'client_id', 'client_secret'] as const;

const TokenRequestBody = Type.Object(
  {
    grant_type: Type.Optional(Type.String({ description: '`client_credentials`.', examples: ['client_credentials'] })),
    scope: Type.Optional(Type.String({ description: 'Space-separated scopes; left out: all the client\'s scopes.', examples: ['reservations:write variants:read'] })),
    client_id: Type.Optional(Type.String({ description: "The client's id (client_secret_post); or use HTTP Basic." })),
    client_secret: Type.Optional(Type.String({ description: 'One of its secrets (client_secret_post); or use HTTP Basic.' })),
  },
  { examples: [{ grant_type: 'client_credentials', scope: 'reservations:write' }] },
);
const TokenSchema = Type.Object({
  access_token: Type.String({
    description:
      'A JWT (typ at+jwt) with `sub` and `client_id` (the client), `scope`, and `client_generation` (the client\'s token generation, ' +
      'which disabling the client moves on: its earlier tokens stay refused once it is enabled again); verify it with the JWKS.',
  }),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer({ description: 'ACCESS_TOKEN_TTL seconds. There is no refresh token: ask again.' }),
  scope: Type.String({ description: 'The scopes granted, space-separated.' }),
});
const OAuthErrorSchema = Type.Object({
  error: Type.String({ description: 'RFC 6749 §5.2: invalid_request, invalid_client, unauthorized_client, unsupported_grant_type, invalid_scope; rate_limited (429).' }),
  error_description: Type.String(),
});
const oauthError = (description: string, headers?: Record<string, unknown>) => ({ description, ...(headers ? { headers } : {}), content: { 'application/json': { schema: OAuthErrorSchema } } });

/** The form's parameters, each at most once (RFC 6749 §3.2); unknown ones are ignored. */
function readForm(text: string): Record<string, string> {
  const form = new URLSearchParams(text);
  const parameters: Record<string, string> = {};
  for (const name of PARAMETERS) {
    const values = form.getAll(name);
    if (values.length > 1) throw new OAuthError('invalid_request', `${name} is given more than once.`, 400);
    if (values[0] !== undefined) parameters[name] = values[0];
  }
  return parameters;
}

/** HTTP Basic (RFC 6749 §2.3.1: the id and secret form-encoded, then joined by a colon), or the form's fields; both at once is a fault. */
function credentialsOf(request: FastifyRequest, form: Record<string, string>): ClientCredentials | undefined {
  const header = request.headers.authorization;
  const fromForm = form.client_id !== undefined || form.client_secret !== undefined;
  if (header !== undefined) {
    if (fromForm) throw new OAuthError('invalid_request', 'Authenticate the client once: with HTTP Basic or with the form, not both.', 400);
    const match = /^Basic +([A-Za-z0-9+/]+=*) *$/i.exec(header);
    const decoded = match ? Buffer.from(match[1]!, 'base64').toString('utf8') : '';
    const colon = decoded.indexOf(':');
    if (colon < 0) throw new OAuthError('invalid_client', 'The Authorization header is not HTTP Basic credentials.', 401, { 'www-authenticate': 'Basic realm="shop-accounts", charset="UTF-8"' });
    try {
      return { clientId: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')), clientSecret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' ')), viaBasic: true };
    } catch {
      throw new OAuthError('invalid_client', 'The HTTP Basic credentials are not form-encoded.', 401, { 'www-authenticate': 'Basic realm="shop-accounts", charset="UTF-8"' });
    }
  }
  if (!fromForm) return undefined;
  return { clientId: form.client_id ?? '', clientSecret: form.client_secret ?? '', viaBasic: false };
}

/**
 * The OAuth 2.0 token endpoint and its discovery document (RFC 8414). Its errors follow RFC 6749
 * §5.2 (`{error, error_description}`, not problem details), because OAuth libraries read that shape.
 */
export const tokenRoutes: FastifyPluginAsyncTypebox<{ tokenIssuer: TokenIssuer }> = async (app, { tokenIssuer }) => {
  const { config } = app;
  app.addContentTypeParser(FORM, { parseAs: 'string' }, (_request, text, done) => {
    try {
      done(null, readForm(text as string));
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

  app.post(
    '/api/oauth/token',
    {
      config: { access: PUBLIC, ownBody: true, noStore: true },
      schema: {
        operationId: 'oauthToken',
        tags: ['clients'],
        security: [],
        summary: 'OAuth 2.0 client credentials grant: an access token for a service client',
        description:
          'RFC 6749 §4.4. Send `grant_type=client_credentials` (and optionally `scope`) as application/x-www-form-urlencoded; ' +
          'authenticate the client with HTTP Basic (client_id:client_secret) or with the `client_id` and `client_secret` fields. ' +
          'Errors are RFC 6749 §5.2 JSON (`error`, `error_description`), not problem details: 401 `invalid_client` (with ' +
          '`WWW-Authenticate: Basic` when Basic was used; a public app, which has no secret, always gets it), 400 ' +
          '`unauthorized_client` (a confidential app: apps never use this grant), `unsupported_grant_type`, `invalid_scope`, `invalid_request` ' +
          '(a parameter missing or repeated, both ways of authentication, a body that is not a form). Rate-limited per address ' +
          'like logins (LOGIN_RATE_LIMIT): 429 `rate_limited` with Retry-After.',
        consumes: [FORM],
        body: TokenRequestBody,
        response: {
          200: { description: 'The token; `Cache-Control: no-store`.', content: { 'application/json': { schema: TokenSchema } } },
          400: oauthError('invalid_request, unauthorized_client, unsupported_grant_type or invalid_scope.'),
          401: oauthError('invalid_client.', { 'www-authenticate': { type: 'string', description: '`Basic realm="shop-accounts"` when HTTP Basic was used.' } }),
          ...problemResponses(),
          429: oauthError('rate_limited.', { 'retry-after': { type: 'integer', description: 'Seconds until the budget refills.' } }),
        },
      },
      preHandler: async (request) => {
        await app.rateLimiter.spend(`oauth:${addressKey(request.ip)}`, config.loginRateLimit);
      },
    },
    async (request, reply) => {
      if (!request.headers['content-type']?.toLowerCase().startsWith(FORM)) throw new OAuthError('invalid_request', `Send the request as ${FORM}.`, 400);
      const form = request.body as Record<string, string>;
      reply.header('pragma', 'no-cache');
      const { db } = await request.access.anyone();
      return grantClientToken(db, tokenIssuer, { grantType: form.grant_type, scope: form.scope, credentials: credentialsOf(request, form) });
    },
  );

  app.get(
    '/.well-known/oauth-authorization-server',
    {
      config: { access: PUBLIC },
      schema: {
        operationId: 'oauthMetadata',
        tags: ['clients'],
        security: [],
        summary: 'OAuth 2.0 authorization server metadata (RFC 8414)',
        response: {
          200: Type.Object({
            issuer: Type.String({ description: 'JWT_ISSUER: the `iss` of every access token.' }),
            token_endpoint: Type.String(),
            jwks_uri: Type.String(),
            grant_types_supported: Type.Array(Type.String()),
            token_endpoint_auth_methods_supported: Type.Array(Type.String()),
            scopes_supported: Type.Array(Type.String()),
            response_types_supported: Type.Array(Type.String()),
          }),
        },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return {
        issuer: config.jwtIssuer,
        token_endpoint: `${config.publicUrl}/api/oauth/token`,
        jwks_uri: `${config.publicUrl}/.well-known/jwks.json`,
        grant_types_supported: ['client_credentials'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
        scopes_supported: [...SCOPE_NAMES],
        response_types_supported: [],
      };
    },
  );
};
