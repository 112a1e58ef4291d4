import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { IdParams } from '../http/common-schemas.js';
import { notFound } from '../http/errors.js';
import { listPage, PageQuery, PageSchema } from '../http/pagination.js';
import { problemResponses } from '../http/problem-schema.js';
import { ADMIN } from '../sessions/access-rule.js';
import { countEvents, eventById, eventsPage } from './event-repository.js';
import { toEventResponse } from './event-response.js';
import { EventSchema, ListEventsQuery } from './event-schemas.js';

/** The audit log: admins, and clients with `events:read`. */
const AUDITORS = { roles: ADMIN, scope: 'events:read' } as const;

export const eventRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '',
    {
      config: { access: AUDITORS },
      schema: {
        operationId: 'listEvents',
        tags: ['events'],
        summary: 'The audit log, newest first (admin)',
        description: 'Every committed change, once per subject. Filters combine; `since` is inclusive and `until` exclusive.',
        querystring: Type.Object({ ...PageQuery, ...ListEventsQuery.properties }, { additionalProperties: false }),
        response: { 200: PageSchema(Type.Ref(EventSchema)), ...problemResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const { type, subject_id, actor_id, actor_type, since, until } = request.query;
      const filter = {
        types: type?.split(','),
        subjectId: subject_id?.toLowerCase(),
        actorId: actor_id?.toLowerCase(),
        actorType: actor_type,
        since: since ? new Date(since) : undefined,
        until: until ? new Date(until) : undefined,
      };
      return listPage(request.query, request.access, {
        rows: (page) => request.access.readPage((db) => eventsPage(db, filter, page)),
        count: (db) => countEvents(db, filter),
        toItem: toEventResponse,
      });
    },
  );

  app.get(
    '/:id',
    {
      config: { access: AUDITORS },
      schema: {
        operationId: 'getEvent',
        tags: ['events'],
        summary: 'One event (admin)',
        params: IdParams,
        response: { 200: Type.Ref(EventSchema), ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const [event] = await request.access.read(eventById, request.params.id);
      if (!event) throw notFound('event');
      return toEventResponse(event);
    },
  );
};
