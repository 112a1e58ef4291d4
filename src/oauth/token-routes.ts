import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Transaction } from 'kysely';
import type { Database } from '../db/tables.js';
import { grantClientToken } from './client-credentials-grant.js';
import { OAuthError } from './oauth-errors.js';
import { authenticateApp } from './client-authentication.js';
import { contextOf } from '../events/event-recorder.js';
import { addressKey } from '../http/client-address.js';
import { PUBLIC } from '../sessions/access-rule.js';
import type { IdTokenSigner } from '../sessions/id-token-signer.js';
import type { TokenIssuer } from '../sessions/token-issuer.js';
import { clientOf } from '../sessions/token-pairs.js';
import { exchangeAuthorizationCode } from './code-grant-service.js';
import { refreshAppTokens } from './refresh-grant-service.js';
import type { GrantSigners, ReplayRefusal, TokenReply } from './token-grants.js';
import { clientEndpointErrors, credentialsOf, FORM, formOf, useOAuthForm } from './oauth-form.js';
import { TokenRequestBody, TokenSchema } from './token-schemas.js';

const PARAMETERS = ['grant_type', 'scope', 'code', 'redirect_uri', 'code_verifier', 'refresh_token', 'client_id', 'client_secret'] as const;

/** A parameter the grant cannot do without (RFC 6749 §5.2 `invalid_request`). */
function required(form: Record<string, string>, name: (typeof PARAMETERS)[number]): string {
  const value = form[name];
  if (value === undefined || value === '') throw new OAuthError('invalid_request', `${name} is required.`, 400);
  return value;
}

const GRANTS = ['client_credentials', 'authorization_code', 'refresh_token'];

/** A code or refresh token presented again: its session is ended (committed), and the grant refused. */
function replayError(refusal: ReplayRefusal): OAuthError {
  return refusal.replayed.what === 'code'
    ? new OAuthError('invalid_grant', 'The code has already been used: the session its first exchange started is ended.', 400)
    : new OAuthError('invalid_grant', 'The refresh token was already used: its session is ended.', 400);
}

/**
 * The OAuth 2.0 token endpoint (API.md sections 11 and 18): the client credentials grant of a
 * service client, and an app's code and refresh grants. Its errors follow RFC 6749 §5.2
 * (`{error, error_description}`, not problem details), because OAuth libraries read that shape.
 */
export const tokenRoutes: FastifyPluginAsyncTypebox<{ tokenIssuer: TokenIssuer; idTokens: IdTokenSigner }> = async (app, { tokenIssuer, idTokens }) => {
  const { config } = app;
  const signers: GrantSigners = { tokenIssuer, idTokens, issuer: config.jwtIssuer };
  // Off with the authorization server (JWT_ISSUER neither https nor http on a loopback host): then only v3's grant.
  const grants = config.authorizationServer ? GRANTS : ['client_credentials'];
  useOAuthForm(app, PARAMETERS);

  app.post(
    '/api/oauth/token',
    {
      config: { access: PUBLIC, ownBody: true, noStore: true },
      schema: {
        operationId: 'oauthToken',
        tags: ['clients'],
        security: [],
        summary: 'OAuth 2.0 token endpoint: client credentials for a service client; the code and refresh grants for an app',
        description:
          'Send the parameters as application/x-www-form-urlencoded, each at most once; `Cache-Control: no-store` on every reply.\n\n' +
          '- `grant_type=client_credentials` (RFC 6749 §4.4; a service client only), optional `scope`: an access token, no refresh token.\n' +
          '- `grant_type=authorization_code` (OAuth 2.1 §4.1.3; an app): `code`, `redirect_uri` (the authorization request\'s, character ' +
          'for character) and `code_verifier` (PKCE S256). The exchange starts a session of section 3 for the user and the app, with the ' +
          "sign-in's `auth_time` and `amr`; the reply carries `scope` (the scopes granted that the app still holds), a `refresh_token` " +
          'only with `offline_access`, an `id_token` only with `openid`. A code is single use: presented again it is `invalid_grant` ' +
          'and the session its first exchange started ends, refresh token included (RFC 9700); of two exchanges at once exactly one ' +
          "succeeds. A failed exchange (another client's code, another redirect_uri, a wrong verifier) does not spend the code.\n" +
          '- `grant_type=refresh_token` (an app): `refresh_token`, optional `scope`, some of the scopes the session was granted, which ' +
          'narrows the new access token only (the session keeps its scopes; the next refresh may ask them all). The token rotates as ' +
          "section 10 says (a spent one within REFRESH_REUSE_INTERVAL gets the same successor; later it ends the session). A new " +
          "`id_token` comes along when `openid` was granted (the sign-in's auth_time, no nonce).\n\n" +
          'Client authentication: a service client or a confidential app with HTTP Basic (client_id:client_secret, form-encoded) or ' +
          'the `client_id` and `client_secret` fields; a public app sends `client_id` alone (an empty `client_secret` counts as none). ' +
          'The code and refresh grants exist only while the authorization server is on (JWT_ISSUER https, or http on a loopback host); ' +
          'otherwise they are `unsupported_grant_type`.\n\n' +
          'Errors are RFC 6749 §5.2 JSON (`error`, `error_description`), not problem details: 401 `invalid_client` (unknown, disabled ' +
          'or deleted client, wrong, expired or deleted secret, a confidential app without its secret, a public app with the client ' +
          'credentials grant; `WWW-Authenticate: Basic` when Basic was used); 400 `unauthorized_client` (an app with the client ' +
          'credentials grant, a service client with the code or refresh grant), `invalid_grant` (a code unknown, expired, spent, ' +
          "another client's, for another redirect_uri, whose verifier is missing or wrong, whose sign-in ended or whose user is no " +
          "longer active; a refresh token unknown, expired, revoked, of an ended session, of another app or of a direct sign-in), " +
          '`unsupported_grant_type`, `invalid_scope` (a scope the client does not hold, or a refresh asking one its session was not ' +
          'granted), `invalid_request` (a parameter missing or repeated, both ways of authentication, a body that is not a form). ' +
          'Rate-limited per address like logins (LOGIN_RATE_LIMIT): 429 `rate_limited` with Retry-After.',
        consumes: [FORM],
        body: TokenRequestBody,
        response: {
          200: { description: 'The tokens; `Cache-Control: no-store`.', content: { 'application/json': { schema: TokenSchema } } },
          ...clientEndpointErrors('invalid_request, invalid_grant, unauthorized_client, unsupported_grant_type or invalid_scope.'),
        },
      },
      preHandler: async (request) => {
        await app.rateLimiter.spend(`oauth:${addressKey(request.ip)}`, config.loginRateLimit);
      },
    },
    async (request, reply) => {
      const form = formOf(request);
      reply.header('pragma', 'no-cache');
      const grantType = required(form, 'grant_type');
      if (!grants.includes(grantType)) throw new OAuthError('unsupported_grant_type', `grant_type must be one of: ${grants.join(', ')}.`, 400);
      const anyone = await request.access.anyone();
      const credentials = credentialsOf(request, form);
      if (grantType === 'client_credentials') return grantClientToken(anyone.db, tokenIssuer, form.scope, credentials);

      const client = await authenticateApp(anyone.db, credentials);
      const context = contextOf(request);
      let grant: (trx: Transaction<Database>) => Promise<{ reply: TokenReply } | ReplayRefusal>;
      if (grantType === 'authorization_code') {
        const exchange = { code: required(form, 'code'), redirectUri: required(form, 'redirect_uri'), codeVerifier: form.code_verifier };
        grant = (trx) => exchangeAuthorizationCode(trx, signers, client, exchange, clientOf(request), context);
      } else {
        const refresh = { refreshToken: required(form, 'refresh_token'), scope: form.scope };
        grant = (trx) => refreshAppTokens(trx, signers, client, refresh, context);
      }
      const outcome = await anyone.transaction(grant);
      if ('replayed' in outcome) {
        request.log.warn({ user_id: outcome.replayed.userId, session_ids: outcome.replayed.endedSessionIds, client_id: client.id }, `a spent ${outcome.replayed.what} came back: its session is ended`);
        throw replayError(outcome);
      }
      return outcome.reply;
    },
  );
};
