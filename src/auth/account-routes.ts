import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { contextOf } from '../events/event-recorder.js';
import { problemResponses } from '../http/problem-schema.js';
import { confirmEmailVerification, confirmPasswordReset, requestPasswordReset, resendVerification } from '../users/account-service.js';
import { EmailBody, MailAcceptedSchema, ResetConfirmBody, VerifyEmailBody } from '../users/user-schemas.js';


/** Password reset and email verification: links sent by email, confirmed without a token. */
export const accountRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { config } = app;

  app.post(
    '/password-reset',
    {
      schema: {
        operationId: 'requestPasswordReset',
        tags: ['auth'],
        security: [],
        summary: 'Email a one-time link to reset the password',
        description: 'Always 202 with the same body, whether or not an account has this email. Rate-limited like logins.',
        body: EmailBody,
        response: { 202: MailAcceptedSchema, ...problemResponses(400, 413, 415) },
      },
      preHandler: async (request) => {
        await app.rateLimiter.spend(`reset:${request.ip}:${request.body.email.toLowerCase()}`, config.loginRateLimit);
      },
    },
    async (request, reply) => {
      await requestPasswordReset(app.db, request.body.email, config);
      return reply.code(202).send({ status: 'accepted' as const });
    },
  );

  app.post(
    '/password-reset/confirm',
    {
      schema: {
        operationId: 'confirmPasswordReset',
        tags: ['auth'],
        security: [],
        summary: 'Set a new password with the emailed token',
        description: 'Spends every outstanding reset link of the user and ends all of its sessions. 400 `invalid_reset_token` for an unknown, used or expired token.',
        body: ResetConfirmBody,
        response: { 204: Type.Null({ description: 'The password is changed.' }), ...problemResponses(400, 413, 415) },
      },
    },
    async (request, reply) => {
      await confirmPasswordReset(app.db, request.body.token, request.body.new_password, contextOf(request));
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/verify-email',
    {
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
      await confirmEmailVerification(app.db, request.body.token, contextOf(request));
      return reply.code(204).send(null);
    },
  );
};

/** Needs an access token: the caller asks for another verification link. */
export const resendRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/verify-email/resend',
    {
      config: { checksCallerWithData: true },
      schema: {
        operationId: 'resendVerificationEmail',
        tags: ['auth'],
        summary: 'Send the caller another verification link',
        description: '202; no email when the address is verified already.',
        response: { 202: MailAcceptedSchema, ...problemResponses(401, 403) },
      },
    },
    async (request, reply) => {
      await resendVerification(request.db, request.identity.userId, app.config);
      return reply.code(202).send({ status: 'accepted' as const });
    },
  );
};
