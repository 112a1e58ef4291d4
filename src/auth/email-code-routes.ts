import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { contextOf } from '../events/event-recorder.js';
import { emailCodeBudgetKey, loginBudgetKey } from '../http/client-address.js';
import { AppError } from '../http/errors.js';
import { problemResponses } from '../http/problem-schema.js';
import { PUBLIC } from '../sessions/access-rule.js';
import { TokenPairSchema } from '../sessions/session-schemas.js';
import type { TokenIssuer } from '../sessions/token-issuer.js';
import { clientOf } from '../sessions/token-pairs.js';
import { emailCodeSettingsOf, requestEmailCode, type EmailCodeSettings } from '../users/email-code-service.js';
import { MailAcceptedSchema } from '../users/user-schemas.js';
import { EmailCodeLoginBody, EmailCodeRequestBody } from './auth-schemas.js';
import { logInWithEmailCode } from './email-code-login-service.js';

/** Sign-in by a 6-digit code sent by email, which also signs up a new address (API.md section 19). */
export const emailCodeRoutes: FastifyPluginAsyncTypebox<{ tokenIssuer: TokenIssuer }> = async (app, { tokenIssuer }) => {
  const { config } = app;
  const settings = (): EmailCodeSettings => emailCodeSettingsOf(config, app.accountMail);

  app.post(
    '/email-code',
    {
      config: { access: PUBLIC },
      schema: {
        operationId: 'requestEmailCode',
        tags: ['auth'],
        security: [],
        summary: 'Email a 6-digit sign-in code',
        description:
          'Always 202 with the same body, at once, whether or not an account has this email: the code is queued after the reply. ' +
          'A code goes to an address an account has (a suspended one too: its right code is then 403 `account_suspended`), and to ' +
          'an address none has while ALLOW_REGISTRATION and EMAIL_CODE_SIGNUP are true (the code then creates the account). ' +
          'The code lives EMAIL_CODE_TTL seconds and replaces the live code of the address (only the newest works). ' +
          'An address gets at most 3 codes an hour, whatever the client addresses asking; beyond that the reply is still 202, ' +
          'nothing is sent and the live code stays. Rate-limited per client address and email (LOGIN_RATE_LIMIT a minute, then 429). ' +
          'An `email` that is not an address is a 400.',
        body: EmailCodeRequestBody,
        response: { 202: MailAcceptedSchema, ...problemResponses(400, 413, 415, 429) },
      },
      preHandler: async (request) => {
        await app.rateLimiter.spend(emailCodeBudgetKey(request.ip, request.body.email), config.loginRateLimit);
      },
      // After the reply has gone: a known address must not take longer to answer than an unknown one.
      onResponse: async (request, reply) => {
        if (reply.statusCode !== 202) return;
        await requestEmailCode((await request.access.anyone()).db, request.body.email, settings()).catch((error: unknown) =>
          request.log.error({ err: error }, 'could not queue an email code'),
        );
      },
    },
    async (_request, reply) => reply.code(202).send({ status: 'accepted' as const }),
  );

  app.post(
    '/login/email-code',
    {
      config: { noStore: true, access: PUBLIC },
      schema: {
        operationId: 'loginWithEmailCode',
        tags: ['auth'],
        security: [],
        summary: 'Exchange an emailed code for a token pair (signing up a new address)',
        description:
          'The code of POST /api/auth/email-code for this email. 400 `invalid_email_code` for a code that is unknown, expired, ' +
          'spent (used, replaced by a newer one, or by a password change, email change, suspension or deletion of its account) or ' +
          'wrong; the 5th wrong try kills the code. Codes count like passwords: per client address and email under LOGIN_RATE_LIMIT, ' +
          'and every refused code toward LOGIN_ACCOUNT_FAILURE_LIMIT (past it 429, the right code included). A right code verifies ' +
          "the account's email. For an address no account has (with ALLOW_REGISTRATION and EMAIL_CODE_SIGNUP), the right code " +
          'creates one: role `user`, `email_verified` true, no password (`has_password` false), named by the local part of the ' +
          'address (its first 100 characters); `user.registered` records `method: "email_code"`. A suspended account\'s right code ' +
          'is 403 `account_suspended` (and spent). A user with a second factor gets 403 `mfa_required` with an `mfa_token`, as a ' +
          'password login does. The access token carries `amr` `["email"]`, or `["email","otp","mfa"]`, `["email","hwk","mfa"]`, ' +
          '`["email","mfa"]` once POST /api/auth/login/mfa completes it. Two tries of one right code at once sign in once.',
        body: EmailCodeLoginBody,
        response: { 200: Type.Ref(TokenPairSchema), ...problemResponses(400, 403, 413, 415, 429) },
      },
      preHandler: async (request) => {
        await app.rateLimiter.spend(loginBudgetKey(request.ip, request.body.email), config.loginRateLimit);
      },
    },
    async (request) => {
      const { db } = await request.access.anyone();
      const credentials = { email: request.body.email, code: request.body.code.replace(/\s/g, '') };
      const outcome = await logInWithEmailCode(db, tokenIssuer, credentials, clientOf(request), { ...settings(), accountFailureLimit: config.loginAccountFailureLimit }, contextOf(request));
      if ('pair' in outcome) return outcome.pair;
      throw new AppError('mfa_required', 'This account has a second factor: send it with the mfa_token to POST /api/auth/login/mfa.', undefined, undefined, { ...outcome.secondStep });
    },
  );
};
