import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { findClient } from '../clients/client-service.js';
import type { ApiClientRow, Database } from '../db/tables.js';
import { contextOf } from '../events/event-recorder.js';
import { emailCodeBudgetKey } from '../http/client-address.js';
import { toAppError } from '../http/error-handler.js';
import { setPageHeaders } from '../http/security.js';
import { grantConsent } from '../oauth/consent-service.js';
import { PUBLIC } from '../sessions/access-rule.js';
import type { AdmittedAnyone } from '../sessions/admission.js';
import type { LiveSigninSession } from '../sessions/signin-sessions.js';
import type { TokenIssuer } from '../sessions/token-issuer.js';
import { methodsOfLoginToken } from '../mfa/mfa-login-service.js';
import { mfaSettingsOf } from '../mfa/mfa-settings.js';
import type { SecondFactorProof } from '../mfa/second-factor-check.js';
import { emailCodeSettingsOf, requestEmailCode, type PageBrowser } from '../users/email-code-service.js';
import { hashPassword } from '../sessions/passwords.js';
import { signOut } from '../users/sign-out-service.js';
import { callbackUrlOf, providerButtons, startFederatedSignIn } from '../federation/federated-signin-service.js';
import { queryOf, queryParameters, readAuthorizationRequest, replyUri, type AuthorizationRequest, type RedirectError } from './authorization-request.js';
import { BrowserCookies } from '../http/browser-cookies.js';
import { CsrfTokens, hashBrowserToken } from '../http/csrf-tokens.js';
import { chooseLocale, type PageLocale } from './page-locale.js';
import { pagePolicy } from './page-policy.js';
import { codeFor, consentMayStand, mustConsent, mustSignIn, SIGNIN_COOKIE, signinSessionOf } from './signin-service.js';
import { assertionOf, refusalOf, SignInAttempts, type Refusal, type SignedIn } from './signin-attempts.js';
import { consentPage, createAccountPage, errorPage, secondFactorPage, signInPage, type PageContext, type PageMessage, type SignInPage } from './signin-pages.js';
import { AuthorizeForm, AuthorizeQuery, HtmlPage, REDIRECT_303, RETRY_AFTER } from './authorize-schemas.js';
import { ANY_CASE_UUID } from '../http/common-schemas.js';

const FORM = 'application/x-www-form-urlencoded';
const EMAIL = /^[^\s@]+@[^\s@]+$/;
/** The cookie that carries a sign-in's `mfa_token` to its second step, as long as the token lives (5 minutes). */
const SECOND_STEP_COOKIE = 'shop_mfa';
const SECOND_STEP_SECONDS = 300;
/** The second factors the second-factor page asks for without JavaScript; a passkey too when the page's script is served. */
const PAGE_METHODS = ['totp', 'recovery_code'];

/**
 * The schemas of these routes document them; the handlers read the query from the URL (a
 * repeated parameter is an OAuth error for the app, not a schema error) and the form's fields
 * themselves (a wrong or missing one is shown on the page).
 */
const readsItsOwnInput = () => () => true;

/**
 * The request's query with its `prompt` set to `prompt` (undefined: `create` taken out, the
 * other values kept): the links between the sign-in and create-account pages of one request.
 */
function withPrompt(query: string, prompt: 'create' | 'login' | undefined): string {
  const parameters = new URLSearchParams(query);
  const kept = (parameters.get('prompt') ?? '').split(' ').filter((value) => value !== '' && value !== 'create');
  if (prompt) parameters.set('prompt', prompt);
  else if (kept.length > 0) parameters.set('prompt', kept.join(' '));
  else parameters.delete('prompt');
  const text = parameters.toString();
  return text ? `?${text}` : '';
}

/** The proof a second-factor form posts: a TOTP code, a recovery code, or a passkey's assertion (undefined when it is not JSON of that shape). */
function secondFactorProofOf(form: Record<string, string>): SecondFactorProof | undefined {
  if (form.action === 'totp') return { code: (form.code ?? '').replace(/\s/g, '') };
  if (form.action === 'recovery_code') return { recovery_code: (form.recovery_code ?? '').trim() };
  const webauthn = assertionOf(form.webauthn ?? '');
  return webauthn ? { webauthn } : undefined;
}

/**
 * The browser a post came from, as a hash of its CSRF token (checked equal to its cookie before
 * any action): what ties a create-account page's pending name and password to the browser that
 * gave them.
 */
const browserHashOf = (form: Record<string, string>): string => hashBrowserToken(form.csrf_token ?? '');

/** The form's fields, the first value of each (a browser sends each once). */
function readForm(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(text)) if (!(name in fields)) fields[name] = value;
  return fields;
}


/**
 * GET /oauth/authorize, the authorization endpoint, and the posts of its hosted pages (API.md
 * section 18): the request is read the same way on each; then either a page (sign in, consent,
 * error) or a 303 to the app's redirect URI with a code or an error.
 */
export const authorizeRoutes: FastifyPluginAsyncTypebox<{ tokenIssuer: TokenIssuer; passkeys: boolean }> = async (app, { tokenIssuer, passkeys }) => {
  const { config } = app;
  const cookies = new BrowserCookies(config.publicUrl);
  const pageMethods = passkeys ? [...PAGE_METHODS, 'webauthn'] : PAGE_METHODS;
  const csrf = new CsrfTokens(cookies);
  const brand = { name: config.signinBrandName, logoUrl: config.signinLogoUrl };
  const localeOf = (request: FastifyRequest, uiLocales?: string | null) => chooseLocale(uiLocales ?? undefined, request.headers['accept-language'], config.signinDefaultLocale);
  // Codes to mail once the reply has gone, as POST /api/auth/email-code does: a known address must not answer slower.
  const codesToSend = new WeakMap<FastifyRequest, { email: string; locale: PageLocale; browser: PageBrowser }>();
  const codeMinutes = Math.round(config.emailCodeTtlSeconds / 60);
  // The query a provider's callback carries on with (the one its attempt kept): its pages post to /oauth/authorize with it, not to the callback's URL.
  const carriedQueries = new WeakMap<FastifyRequest, string>();
  const pageQueryOf = (request: FastifyRequest) => carriedQueries.get(request) ?? queryOf(request.url);

  /**
   * Spends the address-and-email budget of POST /api/auth/email-code for a code a page mails;
   * past it, the refusal to show (its Retry-After already on the reply).
   */
  async function codeBudgetRefusal(request: FastifyRequest, reply: FastifyReply, email: string): Promise<Refusal | undefined> {
    try {
      await app.rateLimiter.spend(emailCodeBudgetKey(request.ip, email), config.loginRateLimit);
      return undefined;
    } catch (error) {
      const refused = refusalOf(error);
      if (refused.retryAfter) reply.header('retry-after', refused.retryAfter);
      return refused;
    }
  }

  app.addContentTypeParser(FORM, { parseAs: 'string' }, (_request, text, done) => done(null, readForm(text as string)));

  const sendPage = (reply: FastifyReply, status: number, html: string, policy: string) => {
    setPageHeaders(reply, policy);
    return reply.code(status).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(html);
  };
  const sendError = (reply: FastifyReply, status: number, locale: PageLocale, text: PageMessage, advice?: Parameters<typeof errorPage>[3]) =>
    sendPage(reply, status, errorPage(locale, brand, text, advice), pagePolicy({ imageUrls: [config.signinLogoUrl] }));
  const redirectTo = (reply: FastifyReply, location: string) => reply.code(303).header('cache-control', 'no-store').header('location', location).send();
  const redirectError = (reply: FastifyReply, fault: { redirectUri: string; state: string | undefined; error: string; description: string }) =>
    redirectTo(reply, replyUri(fault.redirectUri, { error: fault.error, error_description: fault.description, state: fault.state, iss: config.jwtIssuer }));

  app.setErrorHandler(async (error, request, reply) => {
    const problem = toAppError(error as never, request.id);
    if (problem.statusCode >= 500) request.log.error({ err: error }, 'a hosted page failed');
    // The address's request budget, spent before any handler runs, is told as a sign-in's limit is.
    const retryAfter = problem.code === 'rate_limited' ? problem.headers?.['retry-after'] : undefined;
    if (retryAfter) reply.header('retry-after', retryAfter);
    const text: PageMessage = retryAfter ? { key: 'signIn.rateLimited', values: { seconds: Number(retryAfter) } } : { key: problem.statusCode >= 500 ? 'error.server' : 'error.notAForm' };
    return sendError(reply, problem.statusCode, localeOf(request, queryParameters(request.url).get('ui_locales')), text);
  });

  /** The app a request names, when its id could name one. */
  async function appOf(db: Kysely<Database>, query: URLSearchParams): Promise<ApiClientRow | undefined> {
    const ids = query.getAll('client_id');
    if (ids.length !== 1 || !ANY_CASE_UUID.test(ids[0]!)) return undefined;
    return findClient(db, ids[0]!);
  }

  /** Reads the request; answers its faults (a page, or a redirect) and returns undefined then. */
  async function authorizationOf(db: Kysely<Database>, request: FastifyRequest, reply: FastifyReply): Promise<AuthorizationRequest | undefined> {
    const query = queryParameters(pageQueryOf(request));
    const client = await appOf(db, query);
    const read = readAuthorizationRequest(query, client);
    if ('request' in read) return read.request;
    if ('redirectError' in read) {
      await redirectError(reply, read.redirectError as RedirectError);
      return undefined;
    }
    await sendError(reply, 400, localeOf(request, query.get('ui_locales')), { key: read.refusal === 'unknown_app' ? 'error.unknownApp' : 'error.badRedirect' });
    return undefined;
  }

  const pageContext = (request: FastifyRequest, reply: FastifyReply, authorization: AuthorizationRequest): PageContext => {
    const query = pageQueryOf(request);
    return {
      locale: localeOf(request, authorization.uiLocales),
      brand,
      formAction: `/oauth/authorize${query}`,
      query,
      csrfToken: csrf.tokenFor(request, reply),
      createAccountUrl: config.allowRegistration ? `/oauth/authorize${withPrompt(query, 'create')}` : undefined,
      signInUrl: `/oauth/authorize${withPrompt(query, undefined)}`,
      otherAccountUrl: `/oauth/authorize${withPrompt(query, 'login')}`,
    };
  };
  /** A page of this request: images only of the brand and the app, and its posts may end at the app's redirect URI. */
  const requestPolicy = (authorization: AuthorizationRequest, otherFormTargets: string[] = []) =>
    pagePolicy({ imageUrls: [config.signinLogoUrl, authorization.client.logo_uri ?? undefined], formTargets: [authorization.redirectUri, ...otherFormTargets] });

  /** The sign-in page; its password stage offers a passkey too, with a new challenge each time it is shown. */
  async function showSignIn(request: FastifyRequest, reply: FastifyReply, authorization: AuthorizationRequest, status: number, page: SignInPage) {
    const { db } = await request.access.anyone();
    const webauthnOptions = passkeys && page.stage === 'password' ? await attempts.passkeyOptions(db, request) : undefined;
    const providers = page.stage === 'password' ? await providerButtons(db) : undefined;
    // A provider's button is a post answered by a redirect to the provider: its origin is a form target too.
    const providerTargets = (providers ?? []).flatMap((provider) => (provider.authorizationEndpoint ? [provider.authorizationEndpoint] : []));
    return sendPage(reply, status, signInPage(pageContext(request, reply, authorization), { ...page, webauthnOptions, providers }), requestPolicy(authorization, providerTargets));
  }

  /**
   * The second-factor page; with a passkey among the methods, its form carries the request
   * options for the user's passkeys (a challenge tied to the login's mfa_token, as POST
   * /api/auth/mfa/webauthn/authentication-options makes it).
   */
  async function showSecondFactor(db: Kysely<Database>, request: FastifyRequest, reply: FastifyReply, authorization: AuthorizationRequest, status: number, mfaToken: string, methods: string[], error?: PageMessage) {
    const webauthnOptions = passkeys && methods.includes('webauthn') ? await attempts.secondStepPasskeyOptions(db, mfaToken) : undefined;
    return sendPage(reply, status, secondFactorPage(pageContext(request, reply, authorization), { methods, error, webauthnOptions }), requestPolicy(authorization));
  }

  function showCreateAccount(request: FastifyRequest, reply: FastifyReply, authorization: AuthorizationRequest, status: number, page: Parameters<typeof createAccountPage>[1]) {
    return sendPage(reply, status, createAccountPage(pageContext(request, reply, authorization), page), requestPolicy(authorization));
  }

  /**
   * After the checks for a sign-in: the consent page when it must be shown, else a code for the
   * app at once. With prompt=none, what would need a page is an error for the app instead.
   */
  async function carryOn(db: Kysely<Database>, request: FastifyRequest, reply: FastifyReply, authorization: AuthorizationRequest, session: LiveSigninSession | undefined, signedInNow: boolean) {
    const silent = authorization.prompts.includes('none');
    const fault = (error: string, description: string) => redirectError(reply, { redirectUri: authorization.redirectUri, state: authorization.state, error, description });
    if (mustSignIn(authorization, session, signedInNow) || session === undefined) {
      if (silent) return fault('login_required', 'The user is not signed in (or signed in longer ago than max_age).');
      if (authorization.prompts.includes('create') && config.allowRegistration) return showCreateAccount(request, reply, authorization, 200, { email: authorization.loginHint ?? '', name: '' });
      return showSignIn(request, reply, authorization, 200, { stage: 'password', email: authorization.loginHint ?? '' });
    }
    if (await mustConsent(db, authorization, session.user_id)) {
      if (silent) return fault('consent_required', 'The user has not allowed this app these scopes.');
      const { client } = authorization;
      return sendPage(reply, 200, consentPage(pageContext(request, reply, authorization), { name: client.name, logoUri: client.logo_uri, scopes: authorization.scopes, signedInAs: session.email }), requestPolicy(authorization));
    }
    return grant(db, reply, authorization, session);
  }

  async function grant(db: Kysely<Database>, reply: FastifyReply, authorization: AuthorizationRequest, session: LiveSigninSession) {
    const code = await codeFor(db, authorization, session);
    return redirectTo(reply, replyUri(authorization.redirectUri, { code, state: authorization.state, iss: config.jwtIssuer }));
  }

  const attempts = new SignInAttempts({ config, rateLimiter: app.rateLimiter, accountMail: app.accountMail, mfaSettings: mfaSettingsOf(config, app.secretsAtRest), tokenIssuer, secrets: app.secretsAtRest });

  /**
   * The browser's new sign-in session goes into its cookie. The one the cookie named before (a
   * sign-in again, for prompt=login or max_age, or as another person) ends: a browser holds one
   * sign-in, and a session no cookie can reach any more should not stay listed as live. Returns
   * the new sign-in session as every later page reads it (undefined if something ended it since).
   */
  async function keepSignIn(anyone: AdmittedAnyone, request: FastifyRequest, reply: FastifyReply, attempt: SignedIn): Promise<LiveSigninSession | undefined> {
    const previous = await signinSessionOf(anyone.db, cookies.read(request, SIGNIN_COOKIE));
    if (previous && previous.id !== attempt.session.id) {
      await anyone.transaction((trx) => signOut(trx, { userId: previous.user_id, sessionId: previous.id }, 'logout', contextOf(request, previous.user_id)));
    }
    cookies.write(reply, SIGNIN_COOKIE, attempt.secret, config.signinSessionTtlSeconds);
    return signinSessionOf(anyone.db, attempt.secret);
  }

  /**
   * After a first factor (a password, an email code or a passkey): the second-factor page when
   * the user has one to prove, the sign-in page again with what was wrong, or the sign-in session
   * and what comes after a sign-in.
   */
  async function afterFirstFactor(
    anyone: AdmittedAnyone,
    request: FastifyRequest,
    reply: FastifyReply,
    authorization: AuthorizationRequest,
    attempt: Awaited<ReturnType<SignInAttempts['firstStep']>>,
    page: SignInPage,
  ) {
    if ('secondStep' in attempt) {
      const methods = attempt.secondStep.methods.filter((method) => pageMethods.includes(method));
      if (methods.length === 0) return sendError(reply, 403, localeOf(request, authorization.uiLocales), { key: 'secondFactor.unavailable' });
      cookies.write(reply, SECOND_STEP_COOKIE, attempt.secondStep.mfa_token, SECOND_STEP_SECONDS);
      return showSecondFactor(anyone.db, request, reply, authorization, 200, attempt.secondStep.mfa_token, methods);
    }
    if ('error' in attempt) {
      if (attempt.retryAfter) reply.header('retry-after', attempt.retryAfter);
      return showSignIn(request, reply, authorization, attempt.status, { ...page, error: attempt.error });
    }
    return carryOn(anyone.db, request, reply, authorization, await keepSignIn(anyone, request, reply, attempt), true);
  }

  /**
   * A post of the second-factor page (a TOTP code, a recovery code, or a passkey's assertion) for
   * the login whose mfa_token the browser's cookie holds: the sign-in session and what comes after
   * it, the page again with what was wrong, or the sign-in page when the login is gone.
   */
  async function secondFactorStep(anyone: AdmittedAnyone, request: FastifyRequest, reply: FastifyReply, authorization: AuthorizationRequest, form: Record<string, string>) {
    const { db } = anyone;
    const proof = secondFactorProofOf(form);
    const mfaToken = cookies.read(request, SECOND_STEP_COOKIE);
    const attempt = proof ? await attempts.secondStep(db, request, mfaToken, proof) : ({ status: 400, error: { key: 'secondFactor.failed' } } as const);
    if ('error' in attempt) {
      if ('retryAfter' in attempt && attempt.retryAfter) reply.header('retry-after', attempt.retryAfter);
      // A token that is gone (expired, spent, five wrong codes, or a credential change since) needs the first step again.
      if (attempt.error.key === 'secondFactor.expired' || !mfaToken) return showSignIn(request, reply, authorization, attempt.status, { stage: 'password', email: '', error: { key: 'secondFactor.expired' } });
      // Asked again with the methods the first step offered: a user without recovery codes is not offered them now.
      const methods = (await methodsOfLoginToken(db, mfaToken)).filter((method) => pageMethods.includes(method));
      return showSecondFactor(db, request, reply, authorization, attempt.status, mfaToken, methods, attempt.error);
    }
    cookies.write(reply, SECOND_STEP_COOKIE, '', 0);
    return carryOn(db, request, reply, authorization, await keepSignIn(anyone, request, reply, attempt), true);
  }

  app.get(
    '/oauth/authorize',
    {
      config: { access: PUBLIC, noStore: true },
      // A HEAD (a link checker, a prefetch) must not issue a code nor start anything.
      exposeHeadRoute: false,
      validatorCompiler: readsItsOwnInput,
      schema: {
        operationId: 'authorize',
        tags: ['auth'],
        security: [],
        summary: 'The authorization endpoint: sign-in and consent pages, then a code for the app',
        description:
          'OAuth 2.1 authorization code flow with PKCE (S256, required of every app) and OpenID Connect (API.md section 18). ' +
          'An unknown, disabled or deleted `client_id`, a service client, or a `redirect_uri` not registered for the app character ' +
          'for character (only the port of a loopback http URI may differ, RFC 8252) is a 400 HTML error page, never a redirect. ' +
          'Every other fault is a 303 to `redirect_uri` with `error`, `error_description`, `state` and `iss` (RFC 9207): a missing ' +
          'or repeated parameter, a missing PKCE challenge or a method other than S256 (`invalid_request`), a `response_type` other ' +
          'than `code` (`unsupported_response_type`), a scope the app may not ask for (`invalid_scope`). `scope` is required. ' +
          'Without a live sign-in session (the `shop_sid` cookie), with `prompt=login`, or when `max_age` seconds have passed since ' +
          'the sign-in, the sign-in page is shown (`login_hint` fills in the email; its link opens the forgotten-password page, ' +
          'GET /oauth/forgot-password with the same query); a third-party app without a consent covering ' +
          'every scope asked for, or with `prompt=consent`, gets the consent page (a first-party app never does); otherwise a 303 ' +
          'to `redirect_uri` with `code`, `state` and `iss`. `prompt=none` never shows a page: `login_required`, `consent_required` ' +
          'or a code. `prompt=create` shows the create-account page instead of the sign-in page while ALLOW_REGISTRATION is on (a live sign-in session answers as without it). The pages are ' +
          'in English or German, by `ui_locales`, then Accept-Language, then SIGNIN_DEFAULT_LOCALE. The sign-in page also offers a ' +
          'passkey: its form carries the request options of POST /api/auth/passkey/options in `data-webauthn-options` (a new ' +
          "challenge each time it is shown, from that route's per-address budget: past it the page offers no passkey), the email " +
          'field `autocomplete="username webauthn"`, and the script /oauth/assets/passkey.js posts `action=passkey`. Every page is sent with ' +
          '`Cache-Control: no-store` and a strict Content-Security-Policy.',
        querystring: AuthorizeQuery,
        produces: ['text/html'],
        response: { 200: HtmlPage('A sign-in or consent page.'), 303: REDIRECT_303, 400: HtmlPage('The error page: the app or its redirect URI is not right.') },
      },
    },
    async (request, reply) => {
      const { db } = await request.access.anyone();
      const authorization = await authorizationOf(db, request, reply);
      if (!authorization) return reply;
      const session = await signinSessionOf(db, cookies.read(request, SIGNIN_COOKIE));
      return carryOn(db, request, reply, authorization, session, false);
    },
  );

  app.post(
    '/oauth/authorize',
    {
      config: { access: PUBLIC, noStore: true, ownBody: true },
      validatorCompiler: readsItsOwnInput,
      schema: {
        operationId: 'authorizeForm',
        tags: ['auth'],
        security: [],
        summary: "The hosted pages' forms: sign in (password, code or passkey), send a code, allow or deny",
        description:
          'The forms of the pages GET /oauth/authorize shows post here, to the same URL (its query is the authorization request, ' +
          'read again as the GET reads it), as application/x-www-form-urlencoded. `action` is the button pressed: `password` ' +
          '(`email`, `password`), `send_code` (`email`: a 6-digit code is mailed as POST /api/auth/email-code does, and the page ' +
          'asks for it), `email_code` (`email`, `code`), `passkey` (`webauthn`: the JSON of the assertion, an AuthenticationResponseJSON ' +
          "answering the challenge of the sign-in page's `data-webauthn-options`, which its script /oauth/assets/passkey.js gets from the " +
          "browser; checked as POST /api/auth/login/passkey checks it, on that route's per-address budget; a user-verified passkey " +
          'is two factors, one without user verification asks a user with an authenticator app for its code; any refusal is one ' +
          'message, 400), `allow` or `deny` (the consent page). Every post carries `csrf_token`, ' +
          'the token of the form, bound to the browser by a cookie; a post without it, with a wrong one, or one the browser marks ' +
          'cross-site, is a 403 page and changes nothing. Wrong credentials show the page again with one message that never says ' +
          'whether the email has an account (400), and count toward LOGIN_RATE_LIMIT and LOGIN_ACCOUNT_FAILURE_LIMIT exactly as ' +
          "the API's logins do (429 page past them). A right one starts the sign-in session (cookie `shop_sid`, `__Host-` " +
          'prefixed and Secure unless PUBLIC_URL is http on a loopback host; HttpOnly, SameSite=Lax, Path=/; SIGNIN_SESSION_TTL), ' +
          'then shows the consent page or answers 303 with the code. `allow` records the consent (`user.app_authorized`) and ' +
          'answers 303 with the code; `deny` answers 303 with `access_denied`. A user with a second factor gets the second-factor page ' +
          'instead of a session (its mfa_token kept 5 minutes in an HttpOnly cookie `shop_mfa`): `totp` (`code`) or `recovery_code` ' +
          '(`recovery_code`) or, for a user with a passkey, `passkey` with `step=second_factor` (`webauthn`: the assertion answering the ' +
          "challenge in that page's `data-webauthn-options`, for the user's passkeys, tied to the login), counted as POST " +
          '/api/auth/login/mfa counts them (a wrong code or assertion shows the page again, 400, with the methods it had). `create` (`name`, `email`, `password`; ALLOW_REGISTRATION on, ' +
          'else 403) makes no account at once, so that the page never tells whether the email has one: it mails a code as `send_code` ' +
          'does (the same budget) and shows the code field, saying the same to every email. The code, posted with `email_code`, makes ' +
          'the account (role `user`, the name and password given, the email verified by the code, `user.registered`) and signs it in; ' +
          'when the email already had an account, the code signs in to that one and the name and password given are dropped. ' +
          '`provider` (`provider_id`; API.md section 20): the sign-in page shows a button for each enabled identity provider, each ' +
          'its own form posting `action=provider` with `provider_id` and `csrf_token` (a post, not a link, so another site cannot ' +
          'start one). The attempt (its `state` hash, `nonce`, PKCE verifier, the hash of the browser\'s CSRF token and this ' +
          "request's query) is kept 10 minutes in the database and the answer is a 303 to the provider's authorization endpoint " +
          '(code flow, PKCE S256, `state`, `nonce`, redirect URI GET /oauth/callback/{provider id}); an unknown or disabled provider ' +
          'is the 400 error page.',
        querystring: AuthorizeQuery,
        consumes: [FORM],
        body: AuthorizeForm,
        produces: ['text/html'],
        response: {
          200: HtmlPage('The next page: the email code field (after `send_code` or `create`), the second factor, or the consent page.'),
          303: REDIRECT_303,
          400: HtmlPage('The page again, with what was wrong; or the error page of a bad app or redirect URI.'),
          403: HtmlPage(
            'The CSRF token is missing or wrong; or the account is suspended; or registration is closed; or the only second factor is a passkey and the page cannot ask for it (the passkey bundle is not installed).',
          ),
          429: HtmlPage('Too many tries: the page again, saying how long to wait.', RETRY_AFTER),
        },
      },
      onResponse: async (request) => {
        const code = codesToSend.get(request);
        if (code === undefined) return;
        await requestEmailCode((await request.access.anyone()).db, code.email, emailCodeSettingsOf(config, app.accountMail), code.locale, code.browser).catch((error: unknown) =>
          request.log.error({ err: error }, 'could not queue an email code'),
        );
      },
    },
    async (request, reply) => {
      const form = (request.body ?? {}) as Record<string, string>;
      const query = queryParameters(request.url);
      if (!request.headers['content-type']?.toLowerCase().startsWith(FORM)) return sendError(reply, 415, localeOf(request, query.get('ui_locales')), { key: 'error.notAForm' });
      if (!csrf.postIsGenuine(request, form.csrf_token)) return sendError(reply, 403, localeOf(request, query.get('ui_locales')), { key: 'error.forbidden' });
      const anyone = await request.access.anyone();
      const { db } = anyone;
      const authorization = await authorizationOf(db, request, reply);
      if (!authorization) return reply;
      const email = (form.email ?? '').trim();

      switch (form.action) {
        case 'password':
        case 'email_code': {
          const byCode = form.action === 'email_code';
          const stage = byCode ? 'code' : 'password';
          if (!EMAIL.test(email) || email.length > 254) return showSignIn(request, reply, authorization, 400, { stage, email, error: { key: 'signIn.emailInvalid' } });
          if (!byCode && !form.password) return showSignIn(request, reply, authorization, 400, { stage, email, error: { key: 'signIn.passwordMissing' } });
          // The API's limit (1024): a longer one is wrong anyway, and not worth an argon2 run.
          if (!byCode && form.password!.length > 1024) return showSignIn(request, reply, authorization, 400, { stage, email, error: { key: 'signIn.failed' } });
          if (byCode && !form.code?.trim()) return showSignIn(request, reply, authorization, 400, { stage, email, error: { key: 'signIn.codeMissing' } });
          return afterFirstFactor(anyone, request, reply, authorization, await attempts.firstStep(db, request, form, byCode, browserHashOf(form)), { stage, email });
        }
        case 'passkey':
          // The second-factor page's passkey names its step; the sign-in page's is a first factor.
          if (form.step === 'second_factor') return secondFactorStep(anyone, request, reply, authorization, form);
          return afterFirstFactor(anyone, request, reply, authorization, await attempts.passkey(db, request, form.webauthn ?? ''), { stage: 'password', email });
        case 'totp':
        case 'recovery_code':
          return secondFactorStep(anyone, request, reply, authorization, form);
        case 'create': {
          if (!config.allowRegistration) return sendError(reply, 403, localeOf(request, authorization.uiLocales), { key: 'createAccount.closed' });
          const name = (form.name ?? '').trim();
          const password = form.password ?? '';
          const page = { email, name };
          if (name === '' || name.length > 100) return showCreateAccount(request, reply, authorization, 400, { ...page, error: { key: 'createAccount.nameMissing' } });
          if (!EMAIL.test(email) || email.length > 254) return showCreateAccount(request, reply, authorization, 400, { ...page, error: { key: 'signIn.emailInvalid' } });
          if (password.length < 8 || password.length > 128) return showCreateAccount(request, reply, authorization, 400, { ...page, error: { key: 'createAccount.passwordInvalid' } });
          const refusedCreate = await codeBudgetRefusal(request, reply, email);
          if (refusedCreate) return showCreateAccount(request, reply, authorization, refusedCreate.status, { ...page, error: refusedCreate.error });
          // No account yet: one is made when the mailed code comes back, so this page shows the same to an email with an account.
          codesToSend.set(request, { email, locale: localeOf(request, authorization.uiLocales), browser: { browserHash: browserHashOf(form), signup: { name, passwordHash: await hashPassword(password) } } });
          return showSignIn(request, reply, authorization, 200, { stage: 'code', email, notice: { key: 'createAccount.codeSent', values: { email, minutes: codeMinutes } } });
        }
        case 'send_code': {
          if (!EMAIL.test(email) || email.length > 254) return showSignIn(request, reply, authorization, 400, { stage: 'password', email, error: { key: 'signIn.emailInvalid' } });
          const refused = await codeBudgetRefusal(request, reply, email);
          if (refused) return showSignIn(request, reply, authorization, refused.status, { stage: 'password', email, error: refused.error });
          codesToSend.set(request, { email, locale: localeOf(request, authorization.uiLocales), browser: { browserHash: browserHashOf(form) } });
          return showSignIn(request, reply, authorization, 200, {
            stage: 'code',
            email,
            notice: { key: 'signIn.codeSent', values: { email, minutes: codeMinutes } },
          });
        }
        case 'allow': {
          const session = await signinSessionOf(db, cookies.read(request, SIGNIN_COOKIE));
          // The consent page was shown after the checks of a sign-in; only a sign-in that ended since sends the person back to it.
          if (!session) return carryOn(db, request, reply, authorization, undefined, false);
          // A fresh sign-in the request asked for is not skipped by posting `allow` on an old one.
          if (!consentMayStand(authorization, session)) return carryOn(db, request, reply, authorization, session, false);
          if (!authorization.client.first_party) {
            await anyone.transaction((trx) => grantConsent(trx, session.user_id, authorization.client.id, authorization.scopes, contextOf(request, session.user_id)));
          }
          return grant(db, reply, authorization, session);
        }
        case 'provider': {
          // The button of an identity provider (API.md section 20): the attempt is kept in the database, bound to this browser, and the browser sent to the provider.
          const providerUrl = await startFederatedSignIn(db, app.secretsAtRest, { providerId: form.provider_id ?? '', browserHash: browserHashOf(form), authorizationQuery: queryOf(request.url), publicUrl: config.publicUrl });
          if (!providerUrl) return sendError(reply, 400, localeOf(request, authorization.uiLocales), { key: 'error.federationFailed' });
          return redirectTo(reply, providerUrl.href);
        }
        case 'deny':
          return redirectError(reply, { redirectUri: authorization.redirectUri, state: authorization.state, error: 'access_denied', description: 'The user did not allow the app.' });
        default:
          return showSignIn(request, reply, authorization, 400, { stage: 'password', email: email || (authorization.loginHint ?? '') });
      }
    },
  );
  app.get(
    '/oauth/callback/:providerId',
    {
      config: { access: PUBLIC, noStore: true },
      exposeHeadRoute: false,
      validatorCompiler: readsItsOwnInput,
      schema: {
        operationId: 'federatedSignInCallback',
        tags: ['auth'],
        security: [],
        summary: "An identity provider's callback: the end of a sign-in with another provider",
        description:
          'The redirect URI to register at an identity provider (API.md section 20): `{PUBLIC_URL}/oauth/callback/{provider id}`. ' +
          "The provider sends the browser here with `code` and `state` (and `iss`) after the sign-in page's button (POST " +
          '/oauth/authorize with `action=provider`). The sign-in attempt its `state` names must be live (10 minutes), for this ' +
          "provider, unspent, and started by this browser (the hash of its CSRF cookie); it is spent at once, so a replayed " +
          'callback fails. The code is exchanged with the PKCE verifier and the ID token validated (signature by the ' +
          "provider's JWKS, `iss`, `aud`, `exp`, `nonce`); the provider's tokens are not kept. Then the identity's user signs in " +
          '(`amr` `["fed"]`), or is linked or made as section 20 says, and the authorization request the button was pressed on ' +
          'carries on: the consent page, the second-factor page for a user with a second factor, or a 303 to the app with its code. ' +
          'Every failure (a wrong, expired or replayed `state`, an `error` from the provider, a code it refuses, an ID token that ' +
          'does not validate, a provider that does not answer within 10 s, a disabled or deleted provider, no account that could ' +
          'be used) is the 400 error page, which signs nobody in, makes nothing and never says whether an account exists. ' +
          'An attempt started by POST /api/users/profile/identities/connect links the identity to that signed-in user instead ' +
          "(while the session that started it is live; an identity linked to another user is refused) and answers 303 to the " +
          "console's profile (`/admin/#/profile?connected={provider id}`); its failures once the attempt is found are the error page " +
          'with their own message (a `state` that finds no attempt is the sign-in failure above).',
        params: Type.Object({ providerId: Type.String({ description: 'The identity provider id.' }) }),
        querystring: Type.Object({
          code: Type.Optional(Type.String()),
          state: Type.Optional(Type.String()),
          iss: Type.Optional(Type.String()),
          error: Type.Optional(Type.String()),
          error_description: Type.Optional(Type.String()),
        }),
        produces: ['text/html'],
        response: {
          200: HtmlPage('The consent page or the second-factor page of the authorization request the sign-in carries on.'),
          303: REDIRECT_303,
          400: HtmlPage('The error page: the sign-in with the provider failed; nobody is signed in.'),
        },
      },
    },
    async (request, reply) => {
      const anyone = await request.access.anyone();
      const { db } = anyone;
      const { providerId } = request.params as { providerId: string };
      const failed = () => sendError(reply, 400, localeOf(request), { key: 'error.federationFailed' });
      const browserToken = csrf.browserToken(request);
      if (!browserToken) return failed();
      const currentUrl = new URL(`${callbackUrlOf(config.publicUrl, encodeURIComponent(providerId))}${queryOf(request.url)}`);
      const { outcome, authorizationQuery } = await attempts.federated(db, request, { providerId, currentUrl, browserHash: hashBrowserToken(browserToken) });
      if ('error' in outcome) return sendError(reply, 400, localeOf(request), outcome.error, outcome.error.key === 'error.connectFailed' ? 'error.connectAgain' : undefined);
      // "Connect" from the profile: back to the console's profile, which lists the new identity.
      if ('connected' in outcome) return redirectTo(reply, `${config.publicUrl}/admin/#/profile?connected=${encodeURIComponent(providerId)}`);
      if (authorizationQuery === undefined) return failed();
      carriedQueries.set(request, authorizationQuery);
      const authorization = await authorizationOf(db, request, reply);
      if (!authorization) return reply;
      return afterFirstFactor(anyone, request, reply, authorization, outcome, { stage: 'password', email: '' });
    },
  );
  app.post(
    '/oauth/callback/:providerId',
    {
      config: { access: PUBLIC, noStore: true },
      validatorCompiler: readsItsOwnInput,
      schema: {
        operationId: 'federatedSignInFormPostCallback',
        tags: ['auth'],
        security: [],
        summary: "An identity provider's callback as a form post (Apple)",
        description:
          "Apple answers with `response_mode=form_post` (the service asks for it from a provider with Apple's key): the browser " +
          'posts `code`, `state` (and `iss`, or an `error`) here from the provider\'s page. That cross-site post carries none of ' +
          "the browser's SameSite=Lax cookies, which bind the attempt to the browser, so it is answered with a 303 to GET " +
          '/oauth/callback/{provider id} with those fields in the query, a top-level GET that carries them; that GET does ' +
          'everything. Other fields (Apple\'s `user`) are dropped: the ID token is what counts.',
        params: Type.Object({ providerId: Type.String({ description: 'The identity provider id.' }) }),
        consumes: [FORM],
        body: Type.Object(
          {
            code: Type.Optional(Type.String()),
            state: Type.Optional(Type.String()),
            iss: Type.Optional(Type.String()),
            error: Type.Optional(Type.String()),
            error_description: Type.Optional(Type.String()),
          },
          { examples: [{ code: 'c_1a2b3c', state: 'a-random-state' }] },
        ),
        response: { 303: REDIRECT_303, 413: HtmlPage('The error page: the post is larger than any callback.'), 415: HtmlPage('The error page: not a form post.') },
      },
    },
    async (request, reply) => {
      await request.access.anyone();
      const { providerId } = request.params as { providerId: string };
      const form = (request.body ?? {}) as Record<string, unknown>;
      const query = new URLSearchParams();
      for (const name of ['code', 'state', 'iss', 'error', 'error_description']) {
        const value = form[name];
        if (typeof value === 'string') query.set(name, value);
      }
      return redirectTo(reply, `${callbackUrlOf(config.publicUrl, encodeURIComponent(providerId))}?${query.toString()}`);
    },
  );
};
