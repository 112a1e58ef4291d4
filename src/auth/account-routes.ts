import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { contextOf } from '../events/event-recorder.js';
import { passwordResetBudgetKey } from '../http/client-address.js';
import { problemResponses } from '../http/problem-schema.js';
import { ANY_ROLE, PUBLIC } from '../sessions/access-rule.js';
import { confirmEmailVerification, confirmPasswordReset, requestPasswordReset, resendVerification } from '../users/account-service.js';
import { EmailBody, MailAcceptedSchema, ResetConfirmBody, VerifyEmailBody } from '../users/user-schemas.js';


/** Password reset and email verification: links sent by email, confirmed without a token. */
export const accountRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { config } = app;

  app.post(
    '/password-reset',
    {
      config: { access: PUBLIC },
      schema: {
        operationId: 'requestPasswordReset',
        tags: ['auth'],
        security: [],
        summary: 'Email a one-time link to reset the password',
        description:
          'Always 202 with the same body, at once, whether or not an account has this email: the link is queued after the ' +
          'reply, so the reply takes the same time either way. Rate-limited like logins (per address and email); an account ' +
          'gets at most 3 reset mails an hour, whatever the addresses asking (beyond that the reply is still 202).',
        body: EmailBody,
        response: { 202: MailAcceptedSchema, ...problemResponses(400, 413, 415) },
      },
      preHandler: async (request) => {
        await app.rateLimiter.spend(passwordResetBudgetKey(request.ip, request.body.email), config.loginRateLimit);
      },
      // After the reply has gone: a known address must not take longer to answer than an unknown one.
      onResponse: async (request, reply) => {
        if (reply.statusCode !== 202) return;
        await requestPasswordReset((await request.access.anyone()).db, request.body.email, app.accountMail).catch((error: unknown) =>
          request.log.error({ err: error }, 'could not queue a password-reset mail'),
        );
      },
    },
    async (_request, reply) => reply.code(202).send({ status: 'accepted' as const }),
  );

  app.post(
    '/password-reset/confirm',
    {
      config: { access: PUBLIC },
      schema: {
        operationId: 'confirmPasswordReset',
        tags: ['auth'],
        security: [],
        summary: 'Set a new password with the emailed token',
        description:
          'Spends every outstanding reset link of the user, ends all of its sessions and starts its failed-login count afresh. ' +
          '400 `invalid_reset_token` for an unknown, used or expired token (answered before the new password is hashed).',
        body: ResetConfirmBody,
        response: { 204: Type.Null({ description: 'The password is changed.' }), ...problemResponses(400, 413, 415) },
      },
    },
    async (request, reply) => {
      const { db } = await request.access.anyone();
      await confirmPasswordReset(db, request.body.token, request.body.new_password, contextOf(request));
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/verify-email',
    {
      config: { access: PUBLIC },
      schema: {
        operationId: 'verifyEmail',
        tags: ['auth'],
        security: [],
        summary: 'Confirm an email address with the emailed token',
        description: '400 `invalid_verification_token` for an unknown, used or expired token, or one sent to an address the user no longer has.',
        body: VerifyEmailBody,
        response: { 204: Type.Null({ description: 'Verified.' }), ...problemResponses(400, 413, 415) },
      },
    },
    async (request, reply) => {
      await (await request.access.anyone()).transaction((trx) => confirmEmailVerification(trx, request.body.token, contextOf(request)));
      return reply.code(204).send(null);
    },
  );
};

/** Needs an access token: the caller asks for another verification link. */
export const resendRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/verify-email/resend',
    {
      config: { access: { roles: ANY_ROLE } },
      schema: {
        operationId: 'resendVerificationEmail',
        tags: ['auth'],
        summary: 'Send the caller the verification link again',
        description:
          '202; the live link is sent again (a new one only when none lives), no email when the address is verified already. ' +
          'At most once a minute and 5 times in 24 hours per user, counting every request: beyond that 429 with Retry-After. No body.',
        response: { 202: MailAcceptedSchema, ...problemResponses(401, 403, 429) },
      },
    },
    async (request, reply) => {
      const { access } = request;
      await access.transaction((trx, caller) => resendVerification(trx, caller.id, app.accountMail));
      return reply.code(202).send({ status: 'accepted' as const });
    },
  );
};
