import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { contextOf } from '../events/event-recorder.js';
import { toAppError } from '../http/error-handler.js';
import { CANONICAL_UUID } from '../http/common-schemas.js';
import { setPageHeaders } from '../http/security.js';
import { PUBLIC } from '../sessions/access-rule.js';
import type { IdTokenSigner } from '../sessions/id-token-signer.js';
import { BrowserCookies } from '../http/browser-cookies.js';
import { CsrfTokens } from '../http/csrf-tokens.js';
import { logoutErrorPage, signedOutPage, signOutPage } from './logout-pages.js';
import { logoutHintOf, logOut, registeredLogoutRedirect, type LogoutHint } from './logout-service.js';
import { hashBrowserSecret, SIGNIN_COOKIE } from './signin-service.js';
import type { Brand } from './page-document.js';
import { chooseLocale } from './page-locale.js';
import { pagePolicy } from './page-policy.js';

const FORM = 'application/x-www-form-urlencoded';

const LogoutQuery = Type.Object(
  {
    id_token_hint: Type.Optional(Type.String({ description: 'An ID token this service issued to the app (expired ones too): names the session to end.' })),
    post_logout_redirect_uri: Type.Optional(Type.String({ description: "One of the app's `post_logout_redirect_uris`, character for character; any other is never redirected to." })),
    state: Type.Optional(Type.String({ description: 'Returned unchanged on the redirect.' })),
    client_id: Type.Optional(Type.String({ description: "The app's id; must be the hint's audience when both are sent. Without a hint it names whose `post_logout_redirect_uri` this is." })),
    ui_locales: Type.Optional(Type.String({ description: 'Space-separated BCP 47 tags: the page language (`en` or `de`), before Accept-Language.' })),
  },
  { additionalProperties: true },
);
type LogoutParameters = { id_token_hint?: string; post_logout_redirect_uri?: string; state?: string; client_id?: string; ui_locales?: string };

const html = (description: string) => ({ description, content: { 'text/html': { schema: Type.String() } } });
const redirect = (description: string) => ({ description, headers: { location: { type: 'string', description: 'The registered post_logout_redirect_uri, with `state` when one was sent.' } } });

/**
 * RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0; API.md section 18, "Logout"). The
 * `GET` ends sessions at once when an app proves which with an `id_token_hint`; without one it
 * only asks, and the confirmation's `POST` (CSRF-checked) ends the browser's sign-in session.
 * Only a URI registered for the app is ever redirected to.
 */
export const logoutRoutes: FastifyPluginAsyncTypebox<{ idTokens: IdTokenSigner }> = async (app, { idTokens }) => {
  const { config } = app;
  const brand: Brand = { name: config.signinBrandName, logoUrl: config.signinLogoUrl };
  const defaultLocale = config.signinDefaultLocale;
  const cookies = new BrowserCookies(config.publicUrl);
  const csrf = new CsrfTokens(cookies);

  app.addContentTypeParser(FORM, { parseAs: 'string' }, (_request, text, done) => {
    const form: Record<string, string> = {};
    for (const [name, value] of new URLSearchParams(text as string)) if (!(name in form)) form[name] = value;
    done(null, form);
  });

  // A hosted page answers a page, never problem+json: a malformed request (a parameter repeated, a body that is no form) too.
  app.setErrorHandler(async (error, request, reply) => {
    const problem = toAppError(error as never, request.id);
    if (problem.statusCode >= 500) request.log.error({ err: error }, 'the logout page failed');
    const locale = chooseLocale(undefined, request.headers['accept-language'], defaultLocale);
    return sendPage(reply, problem.statusCode, logoutErrorPage(locale, brand, problem.statusCode >= 500 ? 'error.server' : 'error.notAForm'));
  });

  const localeOf = (request: FastifyRequest, parameters: LogoutParameters) => chooseLocale(parameters.ui_locales, request.headers['accept-language'], defaultLocale);
  /** A page; one whose form's post may end at the app's `post_logout_redirect_uri` names it (Chromium holds that redirect to form-action). */
  const sendPage = (reply: FastifyReply, status: number, page: string, formTarget?: string) => {
    setPageHeaders(reply, pagePolicy({ imageUrls: [brand.logoUrl], formTargets: formTarget === undefined ? [] : [formTarget] }));
    return reply.code(status).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(page);
  };
  const redirectTo = (reply: FastifyReply, uri: string, state: string | undefined) => {
    const target = new URL(uri);
    if (state !== undefined) target.searchParams.set('state', state);
    return reply.code(303).header('cache-control', 'no-store').redirect(target.href, 303);
  };
  const browserSecretHashOf = (request: FastifyRequest) => {
    const secret = cookies.read(request, SIGNIN_COOKIE);
    return secret === undefined ? undefined : hashBrowserSecret(secret);
  };
  /** The hint, checked: undefined when none was sent, 'invalid' when one was sent that this service did not issue (or whose app is not `client_id`). */
  const hintOf = (parameters: LogoutParameters): LogoutHint | 'invalid' | undefined => {
    if (parameters.id_token_hint === undefined) return undefined;
    const hint = logoutHintOf(idTokens.verifyIdTokenHint(parameters.id_token_hint));
    if (!hint || (parameters.client_id !== undefined && parameters.client_id.toLowerCase() !== hint.clientId)) return 'invalid';
    return hint;
  };
  const appOf = (hint: LogoutHint | undefined, parameters: LogoutParameters) => {
    const clientId = hint?.clientId ?? parameters.client_id?.toLowerCase();
    return clientId !== undefined && CANONICAL_UUID.test(clientId) ? clientId : undefined;
  };

  app.get(
    '/oauth/logout',
    {
      // A HEAD (a link checker, a prefetch) must not end sessions.
      exposeHeadRoute: false,
      config: { access: PUBLIC, noStore: true },
      schema: {
        operationId: 'oauthLogout',
        tags: ['oauth'],
        security: [],
        summary: 'RP-initiated logout: end the sign-in session and the sessions it started for apps',
        description:
          'OpenID Connect RP-Initiated Logout 1.0. With an `id_token_hint` this service issued (an expired one is accepted, as the ' +
          "specification allows), the session it names ends at once, with the hosted pages' sign-in session it came from, every session " +
          "that sign-in started for apps, and the browser's own sign-in session (its cookie) when it is the hint's user's (another user's is " +
          'not ended by a link: the confirmation page asks); then a registered `post_logout_redirect_uri` ' +
          'is redirected to (303, with `state`), else the signed-out page is shown. Without a hint the page asks first (a form posting ' +
          '`action=logout` with its CSRF token). A hint this service did not sign, or whose audience is not `client_id`, is a 400 page that ' +
          'changes nothing. An unregistered `post_logout_redirect_uri` is never redirected to: the sessions still end and the signed-out ' +
          'page shows. 404 while the authorization server is off (JWT_ISSUER not https).',
        querystring: LogoutQuery,
        response: {
          200: html('The signed-out page, or the confirmation asking to sign out.'),
          303: redirect('Signed out; back to the app.'),
          400: html('The hint was not issued here (or not to `client_id`): nothing ended.'),
        },
      },
    },
    async (request, reply) => {
      const parameters = request.query as LogoutParameters;
      const locale = localeOf(request, parameters);
      const hint = hintOf(parameters);
      if (hint === 'invalid') return sendPage(reply, 400, logoutErrorPage(locale, brand, 'error.badLogoutHint'));
      const { db, transaction } = await request.access.anyone();
      const confirmation = async () => {
        const target = await registeredLogoutRedirect(db, appOf(undefined, parameters), parameters.post_logout_redirect_uri);
        return sendPage(reply, 200, signOutPage(locale, brand, csrf.tokenFor(request, reply), request.url), target);
      };
      if (!hint) return confirmation();
      const browserSecretHash = browserSecretHashOf(request);
      const outcome = await transaction((trx) => logOut(trx, { hint, browserSecretHash }, contextOf(request, hint.userId)));
      // The browser's own sign-in is another user's: ended only when that person confirms it here.
      if (outcome.otherUsersSignIn) return confirmation();
      if (browserSecretHash !== undefined) cookies.write(reply, SIGNIN_COOKIE, '', 0);
      const target = await registeredLogoutRedirect(db, appOf(hint, parameters), parameters.post_logout_redirect_uri);
      return target ? redirectTo(reply, target, parameters.state) : sendPage(reply, 200, signedOutPage(locale, brand));
    },
  );

  app.post(
    '/oauth/logout',
    {
      config: { access: PUBLIC, ownBody: true, noStore: true },
      schema: {
        operationId: 'oauthLogoutConfirm',
        tags: ['oauth'],
        security: [],
        summary: 'The sign-out page\'s confirmation (`action=logout`)',
        description:
          "Posted by the confirmation page to its own URL, as application/x-www-form-urlencoded with `csrf_token` and `action=logout`: ends the browser's " +
          'sign-in session and every session it started for apps, then redirects to `post_logout_redirect_uri` when it is registered for `client_id` (303, with `state`), ' +
          'else shows the signed-out page. A missing or wrong CSRF token is a 403 page and ends nothing.',
        querystring: LogoutQuery,
        consumes: [FORM],
        body: Type.Object({ csrf_token: Type.Optional(Type.String()), action: Type.Optional(Type.String({ enum: ['logout'] })) }, { additionalProperties: true, examples: [{ csrf_token: 'JmNHq0tmh5N1bKZ3rL4dQy7cXv2WsA9eUo8iFp6gTbE', action: 'logout' }] }),
        response: {
          200: html('The signed-out page.'),
          303: redirect('Signed out; back to the app.'),
          400: html('A malformed request (a parameter repeated, a body that is no form): the error page; nothing ended.'),
          403: html('The CSRF token was missing or wrong: nothing ended.'),
        },
      },
    },
    async (request, reply) => {
      const parameters = request.query as LogoutParameters;
      const locale = localeOf(request, parameters);
      const form = (request.body ?? {}) as Record<string, unknown>;
      if (!csrf.postIsGenuine(request, form.csrf_token) || form.action !== 'logout') return sendPage(reply, 403, logoutErrorPage(locale, brand, 'error.forbidden'));
      const { db, transaction } = await request.access.anyone();
      const browserSecretHash = browserSecretHashOf(request);
      if (browserSecretHash !== undefined) {
        await transaction((trx) => logOut(trx, { browserSecretHash }, contextOf(request)));
        cookies.write(reply, SIGNIN_COOKIE, '', 0);
      }
      const target = await registeredLogoutRedirect(db, appOf(undefined, parameters), parameters.post_logout_redirect_uri);
      return target ? redirectTo(reply, target, parameters.state) : sendPage(reply, 200, signedOutPage(locale, brand));
    },
  );
};
