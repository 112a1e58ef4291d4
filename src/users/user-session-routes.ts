import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { contextOf } from '../events/event-recorder.js';
import { IdParams } from '../http/common-schemas.js';
import { notFound } from '../http/errors.js';
import { problemResponses } from '../http/problem-schema.js';
import { listActiveSessions } from '../sessions/session-repository.js';
import { toSessionResponse } from '../sessions/session-response.js';
import { SessionListSchema } from '../sessions/session-schemas.js';
import { signOut } from '../sessions/session-service.js';
import { findUserById } from './user-repository.js';

const ADMIN = ['admin'] as const;

/** An admin's view of a user's sessions, and signing the user out everywhere. */
export const userSessionRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const existing = async (id: string) => {
    if (!(await findUserById(app.db, id))) throw notFound('user');
    return id;
  };

  app.get(
    '/:id/sessions',
    {
      config: { roles: ADMIN },
      schema: {
        operationId: 'listUserSessions',
        tags: ['users'],
        summary: "A user's open sessions (admin)",
        params: IdParams,
        response: { 200: SessionListSchema, ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const sessions = await listActiveSessions(app.db, await existing(request.params.id));
      return { items: sessions.map((session) => toSessionResponse(session, request.caller.session_id)) };
    },
  );

  app.delete(
    '/:id/sessions',
    {
      config: { roles: ADMIN },
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
      await signOut(app.db, { userId: await existing(request.params.id) }, 'admin_sign_out', contextOf(request));
      return reply.code(204).send(null);
    },
  );
};
