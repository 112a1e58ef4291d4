import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { contextOf } from '../events/event-recorder.js';
import { addressKey } from '../http/client-address.js';
import { PUBLIC } from '../sessions/access-rule.js';
import type { TokenIssuer } from '../sessions/token-issuer.js';
import { authenticateClient } from './client-authentication.js';
import { introspectToken } from './introspection-service.js';
import { clientEndpointErrors, credentialsOf, FORM, formOf, useOAuthForm } from './oauth-form.js';
import { revokeToken, type TokenTypeHint } from './revocation-service.js';
import { IntrospectionRequestBody, IntrospectionSchema, RevocationRequestBody, TOKEN_FORM_PARAMETERS } from './token-management-schemas.js';
import { OAuthError } from './oauth-errors.js';


const hintOf = (form: Record<string, string>): TokenTypeHint | undefined =>
  form.token_type_hint === 'access_token' || form.token_type_hint === 'refresh_token' ? form.token_type_hint : undefined;

const tokenOf = (form: Record<string, string>): string => {
  if (form.token === undefined || form.token === '') throw new OAuthError('invalid_request', 'token is required.', 400);
  return form.token;
};

/**
 * Token revocation (RFC 7009) and introspection (RFC 7662) for the apps and services of API.md
 * section 18: forms in, RFC 6749 §5.2 errors out (not problem details), as at the token endpoint.
 * No access token: the client authenticates itself in the form or with HTTP Basic.
 */
export const tokenManagementRoutes: FastifyPluginAsyncTypebox<{ tokenIssuer: TokenIssuer }> = async (app, { tokenIssuer }) => {
  const { config } = app;
  useOAuthForm(app, TOKEN_FORM_PARAMETERS);
  // Spent per address like the token endpoint's budget: a guessed secret or token costs the guesser.
  const spendAddressBudget = async (request: FastifyRequest) => {
    await app.rateLimiter.spend(`oauth:${addressKey(request.ip)}`, config.loginRateLimit);
  };

  app.post(
    '/oauth/revoke',
    {
      config: { access: PUBLIC, ownBody: true, noStore: true },
      schema: {
        operationId: 'oauthRevoke',
        tags: ['oauth'],
        security: [],
        summary: "Revoke an app's refresh or access token (RFC 7009): the app's session ends",
        description:
          'Send `token` (and optionally `token_type_hint`) as application/x-www-form-urlencoded. The client authenticates as at the token ' +
          'endpoint: a confidential app with HTTP Basic or `client_id` and `client_secret`, a public app with `client_id` alone. When the ' +
          "token is a refresh token or an access token of a session the authenticating app holds for a user, that session ends: its refresh " +
          'tokens stop working and its access tokens are refused (401) on their very next request; `user.sessions_ended` is recorded ' +
          "(cause `logout`, the app its actor). 200 with an empty body in every other case too, so that the answer tells nothing: an " +
          "unknown, expired or already revoked token, another app's token (which stays live), a direct sign-in's token, and any token a " +
          'service client sends (service clients hold no users\' sessions). Errors are RFC 6749 §5.2 JSON: 401 `invalid_client` (no, or wrong, ' +
          'client authentication; a confidential app without its secret), 400 `invalid_request` (`token` missing, a parameter repeated, ' +
          'both ways of authentication, a body that is not a form). Rate-limited per address like the token endpoint (429 `rate_limited`).',
        consumes: [FORM],
        body: RevocationRequestBody,
        response: {
          200: { description: 'Revoked, or there was nothing of this app to revoke: an empty body.', content: { 'text/plain': { schema: Type.String({ maxLength: 0 }) } } },
          ...clientEndpointErrors('invalid_request.'),
        },
      },
      preHandler: async (request) => spendAddressBudget(request),
    },
    async (request, reply) => {
      const form = formOf(request);
      const credentials = credentialsOf(request, form);
      const { db, transaction } = await request.access.anyone();
      const client = await authenticateClient(db, credentials, true);
      const token = tokenOf(form);
      await transaction((trx) => revokeToken(trx, tokenIssuer, client, token, hintOf(form), contextOf(request)));
      reply.header('pragma', 'no-cache');
      return reply.code(200).send('');
    },
  );

  app.post(
    '/oauth/introspect',
    {
      config: { access: PUBLIC, ownBody: true, noStore: true },
      schema: {
        operationId: 'oauthIntrospect',
        tags: ['oauth'],
        security: [],
        summary: "Whether an app's access or refresh token is active, and what it is (RFC 7662)",
        description:
          'Send `token` (and optionally `token_type_hint`) as application/x-www-form-urlencoded, authenticated with a secret (HTTP Basic, or ' +
          '`client_id` and `client_secret`): confidential apps and service clients only; a public app is 401 `invalid_client`. A token is ' +
          'active while a request with it would be admitted now (its session open, its user active, its app enabled); then the reply ' +
          'holds `token_type` (`access_token` or `refresh_token`), `sub`, `client_id`, `scope` (the scopes it may use now), `exp`, `iat`, `sid` ' +
          'and `iss`. Otherwise, and for every token the caller may not see, it is `{"active": false}` and nothing more. Who sees what: a ' +
          "confidential app sees its own tokens only (another app's access or refresh token is inactive to it); a service client (a " +
          "resource server an app sends its user's token to), whatever its scopes, sees every app's access tokens (whose JWT it can read " +
          "anyway: what it learns is whether they still count) but no refresh token (only their app ever holds one). Tokens of " +
          'a direct sign-in (section 3) and of API clients are not introspected here: inactive. Errors are RFC 6749 §5.2 JSON: 401 ' +
          '`invalid_client`, 400 `invalid_request` (`token` missing, a parameter repeated, a body that is not a form). ' +
          '`Cache-Control: no-store`. Rate-limited per address like the token endpoint.',
        consumes: [FORM],
        body: IntrospectionRequestBody,
        response: {
          200: { description: 'What the token is; `Cache-Control: no-store`.', content: { 'application/json': { schema: IntrospectionSchema } } },
          ...clientEndpointErrors('invalid_request.'),
        },
      },
      preHandler: async (request) => spendAddressBudget(request),
    },
    async (request, reply) => {
      const form = formOf(request);
      const credentials = credentialsOf(request, form);
      const { db } = await request.access.anyone();
      const client = await authenticateClient(db, credentials, false);
      const token = tokenOf(form);
      reply.header('pragma', 'no-cache');
      return introspectToken(db, tokenIssuer, client, token, hintOf(form), config.jwtIssuer);
    },
  );
};
