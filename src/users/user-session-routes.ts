import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { contextOf } from '../events/event-recorder.js';
import { IdParams } from '../http/common-schemas.js';
import { notFound } from '../http/errors.js';
import { problemResponses } from '../http/problem-schema.js';
import { listActiveSessions } from '../sessions/session-repository.js';
import { toSessionResponse } from '../sessions/session-response.js';
import { SessionListSchema } from '../sessions/session-schemas.js';
import { signOut } from '../sessions/session-service.js';
import { resendVerification } from './account-service.js';
import { findUserById } from './user-repository.js';
import { MailAcceptedSchema } from './user-schemas.js';

const ADMIN = ['admin'] as const;

const SessionParams = Type.Object({ id: IdParams.properties.id, session_id: IdParams.properties.id });

/** An admin's view of a user's sessions and email verification, for the staff console. */
export const userSessionRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const existing = async (db: Kysely<Database>, id: string) => {
    if (!(await findUserById(db, id))) throw notFound('user');
    return id;
  };

  app.get(
    '/:id/sessions',
    {
      config: { roles: ADMIN, checksCallerWithData: true },
      schema: {
        operationId: 'listUserSessions',
        tags: ['users'],
        summary: "A user's open sessions (admin)",
        params: IdParams,
        response: { 200: SessionListSchema, ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const sessions = await listActiveSessions(app.db, await existing(request.db, request.params.id));
      return { items: sessions.map((session) => toSessionResponse(session, request.caller.session_id)) };
    },
  );

  app.delete(
    '/:id/sessions',
    {
      config: { roles: ADMIN, checksCallerWithData: true },
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
      await signOut(app.db, { userId: await existing(request.db, request.params.id) }, 'admin_sign_out', contextOf(request));
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/:id/sessions/:session_id',
    {
      config: { roles: ADMIN, checksCallerWithData: true },
      schema: {
        operationId: 'endUserSession',
        tags: ['users'],
        summary: "End one of a user's sessions (admin)",
        description: 'Its refresh tokens stop working, and its access tokens on their next request. A session that is not open, or not this user\'s, is 404.',
        params: SessionParams,
        response: { 204: Type.Null({ description: 'Ended.' }), ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const userId = await existing(request.db, request.params.id);
      const ended = await signOut(app.db, { userId, sessionId: request.params.session_id }, 'admin_sign_out', contextOf(request));
      if (ended.length === 0) throw notFound('session');
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/:id/verify-email/resend',
    {
      config: { roles: ADMIN, checksCallerWithData: true },
      schema: {
        operationId: 'resendUserVerificationEmail',
        tags: ['users'],
        summary: "Send a user another verification link (admin)",
        description: '202; no email when the address is verified already.',
        params: IdParams,
        response: { 202: MailAcceptedSchema, ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await resendVerification(app.db, await existing(request.db, request.params.id), app.config);
      return reply.code(202).send({ status: 'accepted' as const });
    },
  );
};
