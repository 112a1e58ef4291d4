import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { contextOf } from '../events/event-recorder.js';
import { IdParams } from '../http/common-schemas.js';
import { listPage, PageQuery, PageSchema } from '../http/pagination.js';
import { notFound } from '../http/errors.js';
import { IdempotencyKeyHeader, replyOnce } from '../http/idempotency.js';
import { problemResponses, resourceReply } from '../http/problem-schema.js';
import { findVariantById } from '../variants/variant-repository.js';
import { countActiveReservationsOfVariant, findReservation, listActiveReservationsOfVariant } from './reservation-repository.js';
import { toReservationResponse } from './reservation-response.js';
import { ReservationBody, ReservationSchema } from './reservation-schemas.js';
import { createReservation, finishReservation } from './reservation-service.js';

const STAFF = ['manager', 'admin'] as const;
const ReservationReply = Type.Ref(ReservationSchema);

/** Units held for a checkout: all lines or none, then committed, released or expired. */
export const reservationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/reservations',
    {
      config: { roles: STAFF, checksCallerWithData: true },
      schema: {
        operationId: 'createReservation',
        tags: ['inventory'],
        summary: 'Hold units of one or more variants, all or nothing (manager, admin)',
        description:
          'Needs `available` >= `quantity` on every line, checked under the rows\' locks, and adds the quantities to `reserved`. ' +
          'Lines that fall short are each listed in a 409 `insufficient_stock`; a line naming no variant is a 404 with its path. ' +
          'Unless committed or released, the reservation expires within 10 s after `expires_at` and its units are available again.',
        headers: Type.Object({ 'idempotency-key': IdempotencyKeyHeader }),
        body: ReservationBody,
        response: { 201: resourceReply(ReservationReply, 'Created.', { location: true, etag: false }), ...problemResponses(400, 401, 403, 404, 409, 413, 415, 422) },
      },
    },
    async (request, reply) =>
      replyOnce(request.db, request, reply, request.identity.userId, async (trx) => {
        const reservation = await createReservation(trx, request.body, contextOf(request));
        return { status: 201, headers: { location: `/api/reservations/${reservation.id}` }, body: toReservationResponse(reservation) };
      }),
  );

  app.get(
    '/reservations/:id',
    {
      config: { roles: STAFF, checksCallerWithData: true },
      schema: {
        operationId: 'getReservation',
        tags: ['inventory'],
        summary: 'One reservation (manager, admin)',
        params: IdParams,
        response: { 200: resourceReply(ReservationReply, 'The reservation.', { etag: false }), ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const reservation = await findReservation(request.db, request.params.id);
      if (!reservation) throw notFound('reservation');
      return toReservationResponse(reservation);
    },
  );

  app.get(
    '/variants/:id/reservations',
    {
      config: { roles: STAFF, checksCallerWithData: true },
      schema: {
        operationId: 'listVariantReservations',
        tags: ['inventory'],
        summary: 'The active reservations holding units of a variant, newest first (manager, admin)',
        description: 'Their quantities add up to the variant\'s `reserved`. 404 for an unknown variant.',
        params: IdParams,
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: PageSchema(ReservationReply), ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const variant = await findVariantById(request.db, request.params.id);
      if (!variant) throw notFound('variant');
      return listPage(request.query, {
        rows: (page) => listActiveReservationsOfVariant(app.db, variant.id, page),
        count: () => countActiveReservationsOfVariant(app.db, variant.id),
        toItem: toReservationResponse,
      });
    },
  );

  for (const [action, status] of [
    ['commit', 'committed'],
    ['release', 'released'],
  ] as const) {
    app.post(
      `/reservations/:id/${action}`,
      {
        config: { roles: STAFF, checksCallerWithData: true },
        schema: {
          operationId: `${action}Reservation`,
          tags: ['inventory'],
          summary:
            action === 'commit'
              ? 'Commit a reservation: its units leave the stock (manager, admin)'
              : 'Release a reservation: its units are available again (manager, admin)',
          description:
            (action === 'commit'
              ? 'Takes the quantities off `stock` and `reserved` and writes a movement per line (reason `reservation committed`, the reservation\'s `reference`). '
              : 'Takes the quantities off `reserved`. ') +
            `Repeating it answers 200 with the reservation unchanged; a reservation in another state (expired included, also one whose \`expires_at\` has passed) is 409 \`reservation_closed\`. No body.`,
          params: IdParams,
          response: { 200: resourceReply(ReservationReply, `The reservation, \`status: ${status}\`.`, { etag: false }), ...problemResponses(400, 401, 403, 404, 409) },
        },
      },
      async (request) => toReservationResponse(await finishReservation(request.db, request.params.id, status, contextOf(request))),
    );
  }
};
