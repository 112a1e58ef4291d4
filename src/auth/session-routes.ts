import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { contextOf } from '../events/event-recorder.js';
import { IdParams } from '../http/common-schemas.js';
import { notFound } from '../http/errors.js';
import { problemResponses } from '../http/problem-schema.js';
import { ANY_ROLE } from '../sessions/access-rule.js';
import { activeSessions } from '../sessions/session-repository.js';
import { toSessionResponse } from '../sessions/session-response.js';
import { SessionListSchema } from '../sessions/session-schemas.js';
import { endSession } from '../users/sign-out-service.js';

/** The caller's own sessions: where it is signed in, and signing one of them out. Users only. */
export const sessionRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/sessions',
    {
      config: { access: { roles: ANY_ROLE, duringEnrolment: true, account: true } },
      schema: {
        operationId: 'listMySessions',
        tags: ['auth'],
        summary: "The caller's open sessions, newest first",
        response: { 200: SessionListSchema, ...problemResponses(401, 403) },
      },
    },
    async (request) => {
      const { access } = request;
      const sessions = await access.readPage((db) => activeSessions(db, access.ownUserId));
      const { caller } = await access.admit();
      return { items: sessions.map((session) => toSessionResponse(session, caller.sessionId)) };
    },
  );

  app.delete(
    '/sessions/:id',
    {
      config: { access: { roles: ANY_ROLE, duringEnrolment: true, account: true } },
      schema: {
        operationId: 'endMySession',
        tags: ['auth'],
        summary: 'End one of the caller’s sessions',
        description: 'Its refresh tokens stop working, and its access tokens on their next request. Another user’s session is 404.',
        params: IdParams,
        response: { 204: Type.Null({ description: 'Ended.' }), ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const { access } = request;
      const ended = await access.transaction((trx, caller) => endSession(trx, { userId: caller.id, sessionId: request.params.id }, contextOf(request)));
      if (!ended) throw notFound('session');
      return reply.code(204).send(null);
    },
  );
};
