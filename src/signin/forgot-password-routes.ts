import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { passwordResetBudgetKey } from '../http/client-address.js';
import { toAppError } from '../http/error-handler.js';
import { setPageHeaders } from '../http/security.js';
import { PUBLIC } from '../sessions/access-rule.js';
import { requestPasswordReset } from '../users/account-service.js';
import { queryOf, queryParameters } from './authorization-request.js';
import { AuthorizeQuery, HtmlPage, RETRY_AFTER } from './authorize-schemas.js';
import { BrowserCookies } from '../http/browser-cookies.js';
import { CsrfTokens } from '../http/csrf-tokens.js';
import { forgotPasswordPage } from './forgot-password-page.js';
import { chooseLocale, type PageLocale } from './page-locale.js';
import { pagePolicy } from './page-policy.js';
import { refusalOf } from './signin-attempts.js';
import { errorPage, type PageContext, type PageMessage } from './signin-pages.js';

const FORM = 'application/x-www-form-urlencoded';
const EMAIL = /^[^\s@]+@[^\s@]+$/;

const ForgotPasswordForm = Type.Object(
  {
    action: Type.Optional(Type.String({ description: '`forgot_password`, the one button.', examples: ['forgot_password'] })),
    csrf_token: Type.Optional(Type.String({ description: "The form's CSRF token (from the page; bound to the browser by a cookie)." })),
    email: Type.Optional(Type.String({ description: 'The email of the account whose password is forgotten.' })),
  },
  { examples: [{ action: 'forgot_password', csrf_token: 'Zq3t0Jx2Vw8yR1uK5mN7pQ9sT4vX6zA2bC8dE0fG1hI', email: 'ada@example.com' }] },
);

/**
 * The forgotten-password page of the hosted pages (API.md sections 3 and 18), reached from the
 * sign-in page's link with the authorization request's query, which it keeps only to link back:
 * the request is read and checked when the person returns to /oauth/authorize. Its post asks for
 * section 3's reset exactly as POST /api/auth/password-reset does: the same budget under the same
 * key, the same service after the reply has gone, and the same answer whether or not the email
 * has an account; the mail is in the page's language.
 */
export const forgotPasswordRoutes: FastifyPluginAsync = async (app) => {
  const { config } = app;
  const cookies = new BrowserCookies(config.publicUrl);
  const csrf = new CsrfTokens(cookies);
  const brand = { name: config.signinBrandName, logoUrl: config.signinLogoUrl };
  const policy = pagePolicy({ imageUrls: [config.signinLogoUrl] });
  const localeOf = (request: FastifyRequest) => chooseLocale(queryParameters(request.url).get('ui_locales') ?? undefined, request.headers['accept-language'], config.signinDefaultLocale);
  // Reset requests to send once the reply has gone, as the API does: a known address must not answer slower.
  const resetsToRequest = new WeakMap<FastifyRequest, { email: string; locale: PageLocale }>();

  app.addContentTypeParser(FORM, { parseAs: 'string' }, (_request, text, done) => {
    const form: Record<string, string> = {};
    for (const [name, value] of new URLSearchParams(text as string)) if (!(name in form)) form[name] = value;
    done(null, form);
  });

  const sendPage = (reply: FastifyReply, status: number, html: string) => {
    setPageHeaders(reply, policy);
    return reply.code(status).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(html);
  };
  const sendError = (request: FastifyRequest, reply: FastifyReply, status: number, text: PageMessage) => sendPage(reply, status, errorPage(localeOf(request), brand, text));
  const context = (request: FastifyRequest, reply: FastifyReply): PageContext => {
    const query = queryOf(request.url);
    return { locale: localeOf(request), brand, formAction: `/oauth/forgot-password${query}`, query, csrfToken: csrf.tokenFor(request, reply) };
  };
  const show = (request: FastifyRequest, reply: FastifyReply, status: number, page: Parameters<typeof forgotPasswordPage>[1]) => sendPage(reply, status, forgotPasswordPage(context(request, reply), page));

  app.setErrorHandler(async (error, request, reply) => {
    const problem = toAppError(error as never, request.id);
    if (problem.statusCode >= 500) request.log.error({ err: error }, 'a hosted page failed');
    const retryAfter = problem.code === 'rate_limited' ? problem.headers?.['retry-after'] : undefined;
    if (retryAfter) reply.header('retry-after', retryAfter);
    const text: PageMessage = retryAfter ? { key: 'signIn.rateLimited', values: { seconds: Number(retryAfter) } } : { key: problem.statusCode >= 500 ? 'error.server' : 'error.notAForm' };
    return sendError(request, reply, problem.statusCode, text);
  });

  const description =
    'The forgotten-password page of the hosted pages (API.md sections 3 and 18), linked from the sign-in page with the ' +
    "authorization request's query, which it keeps for its link back to the sign-in page (/oauth/authorize with that query). ";

  app.get(
    '/oauth/forgot-password',
    {
      config: { access: PUBLIC, noStore: true },
      exposeHeadRoute: false,
      schema: {
        operationId: 'forgotPasswordPage',
        tags: ['auth'],
        security: [],
        summary: 'The forgotten-password page',
        description: `${description}In English or German as the sign-in page (\`ui_locales\`, then Accept-Language, then SIGNIN_DEFAULT_LOCALE); \`login_hint\` fills in the email.`,
        querystring: Type.Object(AuthorizeQuery.properties, { additionalProperties: true }),
        produces: ['text/html'],
        response: { 200: HtmlPage('The page: one email field, `action=forgot_password`.'), 400: HtmlPage('A malformed request (a parameter repeated): the error page.') },
      },
    },
    async (request, reply) => show(request, reply, 200, { email: queryParameters(request.url).get('login_hint') ?? '' }),
  );

  app.post(
    '/oauth/forgot-password',
    {
      config: { access: PUBLIC, noStore: true, ownBody: true },
      // The form's fields are read by the handler, which shows what is wrong on the page.
      validatorCompiler: () => () => true,
      schema: {
        operationId: 'forgotPasswordForm',
        tags: ['auth'],
        security: [],
        summary: "The forgotten-password page's form (`action=forgot_password`)",
        description:
          `${description}Posted to the page's own URL as application/x-www-form-urlencoded with \`email\`, \`csrf_token\` and ` +
          '`action=forgot_password`: the page again (200) saying that if the email has an account a link is on its way, the same ' +
          'whether or not it has one; the reset of POST /api/auth/password-reset is then asked for after the reply (at most 3 mails ' +
          "an hour per account), its mail in the page's language. It spends the same per-address-and-email budget as " +
          'POST /api/auth/password-reset (LOGIN_RATE_LIMIT; a 429 page past it). A missing or wrong CSRF token is a 403 page and ' +
          'sends nothing.',
        querystring: Type.Object(AuthorizeQuery.properties, { additionalProperties: true }),
        consumes: [FORM],
        body: ForgotPasswordForm,
        produces: ['text/html'],
        response: {
          200: HtmlPage('The page again, saying a link is on its way if the email has an account.'),
          400: HtmlPage('The page again: the email is not an email address.'),
          403: HtmlPage('The CSRF token is missing or wrong: nothing is sent.'),
          429: HtmlPage('Too many requests: the page again, saying how long to wait.', RETRY_AFTER),
        },
      },
      onResponse: async (request) => {
        const reset = resetsToRequest.get(request);
        if (reset === undefined) return;
        await requestPasswordReset((await request.access.anyone()).db, reset.email, app.accountMail, reset.locale).catch((error: unknown) =>
          request.log.error({ err: error }, 'could not queue a password-reset mail'),
        );
      },
    },
    async (request, reply) => {
      const form = (request.body ?? {}) as Record<string, string>;
      if (!request.headers['content-type']?.toLowerCase().startsWith(FORM)) return sendError(request, reply, 415, { key: 'error.notAForm' });
      if (!csrf.postIsGenuine(request, form.csrf_token)) return sendError(request, reply, 403, { key: 'error.forbidden' });
      const email = (form.email ?? '').trim();
      if (form.action !== 'forgot_password') return show(request, reply, 400, { email });
      if (!EMAIL.test(email) || email.length > 254) return show(request, reply, 400, { email, error: { key: 'signIn.emailInvalid' } });
      try {
        await app.rateLimiter.spend(passwordResetBudgetKey(request.ip, email), config.loginRateLimit);
      } catch (error) {
        const refused = refusalOf(error);
        if (refused.retryAfter) reply.header('retry-after', refused.retryAfter);
        return show(request, reply, refused.status, { email, error: refused.error });
      }
      resetsToRequest.set(request, { email, locale: localeOf(request) });
      return show(request, reply, 200, { email, notice: { key: 'forgotPassword.sent', values: { email } } });
    },
  );
};
