import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { BrowserCookies } from '../http/browser-cookies.js';
import { CsrfTokens, hashBrowserToken } from '../http/csrf-tokens.js';
import { forbidden, notFound } from '../http/errors.js';
import { problemResponses } from '../http/problem-schema.js';
import { ANY_ROLE, type AccessRule } from '../sessions/access-rule.js';
import { startFederatedSignIn } from './federated-signin-service.js';
import { connectableProviders } from './provider-repository.js';

/** Connecting adds a way of signing in to the account: a direct sign-in's token, with step-up as for a new second factor. */
const CONNECT: AccessRule = { roles: ANY_ROLE, directSignInOnly: true, stepUp: true };
const LIST: AccessRule = { roles: ANY_ROLE, directSignInOnly: true };

const ConnectableProviderList = Type.Object({
  items: Type.Array(
    Type.Object({
      id: Type.String({ format: 'uuid' }),
      name: Type.String({ description: "The provider's name." }),
      button_label: Type.String({ description: "What its button says (\"Continue with Google\")." }),
    }),
    { description: 'Every enabled provider, by label; not paged.' },
  ),
});

/**
 * "Connect" from the profile (API.md section 20: a manager or admin links an identity only from
 * a signed-in session; any user may, and returns to the console's profile). The start is an API call, so the console's own session
 * names the user; the rest runs in the browser as a sign-in does, and its callback links the
 * identity to that user while the session stays live. The attempt is bound to the browser that
 * made the call (the hosted pages' CSRF cookie, set here when it has none): a callback from
 * another browser, holding the attempt's link, links nothing.
 */
export const identityConnectRoutes: FastifyPluginAsyncTypebox<{ connecting: boolean }> = async (app, { connecting }) => {
  const { config } = app;
  const csrf = new CsrfTokens(new BrowserCookies(config.publicUrl));

  app.get(
    '/api/users/profile/connectable-providers',
    {
      config: { access: LIST },
      schema: {
        operationId: 'listConnectableProviders',
        tags: ['users'],
        summary: 'The identity providers the caller may connect',
        description:
          'Each enabled identity provider by id, name and button label: what the profile offers to connect (POST /api/users/profile/identities/connect). ' +
          'Empty while the authorization server is off: connecting ends at a page of its hosted pages.',
        response: { 200: ConnectableProviderList, ...problemResponses(401, 403) },
      },
    },
    async (request) => ({ items: connecting ? await request.access.readPage(connectableProviders) : [] }),
  );

  // The callback that ends a connection is a page of the authorization server: without it, nothing to start.
  if (!connecting) return;

  app.post(
    '/api/users/profile/identities/connect',
    {
      config: { access: CONNECT, noStore: true },
      schema: {
        operationId: 'connectMyIdentity',
        tags: ['users'],
        summary: 'Start connecting an identity at another provider to the caller',
        description:
          'The start of the profile\'s "Connect" (API.md section 20). Answers the provider\'s authorization URL (code flow, PKCE S256, ' +
          '`state`, `nonce`) for the browser to open; the attempt lives 10 minutes, is bound to the browser that made this call (the ' +
          "hosted pages' CSRF cookie, set on this reply when the browser has none, so call it from the browser, with its cookies) " +
          'and to the calling session. The callback (GET /oauth/callback/{provider id}) then links the identity to the caller, records ' +
          '`user.identity_linked`, and answers 303 to `/admin/#/profile?connected={provider id}`; it links nothing when the session ' +
          'has ended meanwhile or the identity belongs to another user (the error page). No email is compared and no role is ' +
          'excluded: the caller proved the account by signing in. 404 for a provider that is not there or is disabled. Only while ' +
          'the authorization server is on (the callback is one of its pages).',
        body: Type.Object(
          { provider_id: Type.String({ format: 'uuid', description: 'The identity provider to connect.' }) },
          { additionalProperties: false, examples: [{ provider_id: '0b6f2c1e-5d4a-4e3b-9c8d-7a6b5c4d3e2f' }] },
        ),
        response: {
          200: Type.Object({ authorization_url: Type.String({ format: 'uri', description: "The provider's authorization URL: open it in the browser that made this call." }) }),
          ...problemResponses(400, 401, 403, 404),
        },
      },
    },
    async (request, reply) => {
      const browserToken = csrf.tokenFor(request, reply);
      const providerId = request.body.provider_id.toLowerCase();
      const url = await request.access.transaction((trx, caller) => {
        if (caller.sessionId === undefined) throw forbidden();
        return startFederatedSignIn(trx, app.secretsAtRest, {
          providerId,
          browserHash: hashBrowserToken(browserToken),
          authorizationQuery: '',
          publicUrl: config.publicUrl,
          linking: { userId: caller.id, sessionId: caller.sessionId },
        });
      });
      if (!url) throw notFound('identity provider');
      return { authorization_url: url.href };
    },
  );
};
