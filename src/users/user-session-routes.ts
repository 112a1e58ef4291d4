import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { contextOf } from '../events/event-recorder.js';
import { IdParams } from '../http/common-schemas.js';
import { notFound } from '../http/errors.js';
import { problemResponses } from '../http/problem-schema.js';
import { ADMIN } from '../sessions/access-rule.js';
import type { Access } from '../sessions/admission.js';
import { listActiveSessions } from '../sessions/session-repository.js';
import { toSessionResponse } from '../sessions/session-response.js';
import { SessionListSchema } from '../sessions/session-schemas.js';
import { signOut } from './sign-out-service.js';
import { resendVerification } from './account-service.js';
import { userById } from './user-repository.js';
import { MailAcceptedSchema } from './user-schemas.js';

const SessionParams = Type.Object({ id: IdParams.properties.id, session_id: IdParams.properties.id });

/** The user the path names, read beside the caller's admission; 404 when there is none. */
async function existingUser(access: Access, id: string): Promise<string> {
  if ((await access.read(userById, id)).length === 0) throw notFound('user');
  return id;
}

/** An admin's view of a user's sessions and email verification, for the staff console. */
export const userSessionRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/:id/sessions',
    {
      config: { access: { roles: ADMIN } },
      schema: {
        operationId: 'listUserSessions',
        tags: ['users'],
        summary: "A user's open sessions (admin)",
        params: IdParams,
        response: { 200: SessionListSchema, ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { access } = request;
      const userId = await existingUser(access, request.params.id);
      const { caller, db } = await access.admit();
      const sessions = await listActiveSessions(db, userId);
      return { items: sessions.map((session) => toSessionResponse(session, caller.sessionId)) };
    },
  );

  app.delete(
    '/:id/sessions',
    {
      config: { access: { roles: ADMIN } },
      schema: {
        operationId: 'signUserOut',
        tags: ['users'],
        summary: 'Sign a user out everywhere (admin)',
        description: 'Every session ends: refresh tokens stop working, and access tokens on their next request.',
        params: IdParams,
        response: { 204: Type.Null({ description: 'Signed out.' }), ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const userId = await existingUser(request.access, request.params.id);
      await request.access.transaction((trx) => signOut(trx, { userId }, 'admin_sign_out', contextOf(request)));
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/:id/sessions/:session_id',
    {
      config: { access: { roles: ADMIN } },
      schema: {
        operationId: 'endUserSession',
        tags: ['users'],
        summary: "End one of a user's sessions (admin)",
        description: "Its refresh tokens stop working, and its access tokens on their next request. A session that is not open, or not this user's, is 404.",
        params: SessionParams,
        response: { 204: Type.Null({ description: 'Ended.' }), ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const userId = await existingUser(request.access, request.params.id);
      const sessionId = request.params.session_id.toLowerCase();
      const ended = await request.access.transaction((trx) => signOut(trx, { userId, sessionId }, 'admin_sign_out', contextOf(request)));
      if (ended.length === 0) throw notFound('session');
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/:id/verify-email/resend',
    {
      config: { access: { roles: ADMIN } },
      schema: {
        operationId: 'resendUserVerificationEmail',
        tags: ['users'],
        summary: "Send a user the verification link again (admin)",
        description:
          '202; the live link is sent again (a new one only when none lives), no email when the address is verified already. ' +
          'At most once a minute and 5 times in 24 hours per user (429 with Retry-After beyond). No body.',
        params: IdParams,
        response: { 202: MailAcceptedSchema, ...problemResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      const userId = await existingUser(request.access, request.params.id);
      await request.access.transaction((trx) => resendVerification(trx, userId, app.accountMail));
      return reply.code(202).send({ status: 'accepted' as const });
    },
  );
};
