import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { contextOf } from '../events/event-recorder.js';
import { IdParams } from '../http/common-schemas.js';
import { notFound } from '../http/errors.js';
import { IdempotencyKeyHeader, idempotentReply, replyOnce } from '../http/idempotency.js';
import { listPage, PageQuery, PageSchema } from '../http/pagination.js';
import { problemResponses, resourceReply } from '../http/problem-schema.js';
import { STAFF } from '../sessions/access-rule.js';
import {
  activeReservationsOfVariantPage,
  countActiveReservationsOfVariant,
  countReservations,
  reservationById,
  reservationsPage,
  withLinesOfPage,
  type Reservation,
} from './reservation-repository.js';
import { toReservationResponse } from './reservation-response.js';
import { reallocateReservation } from './reservation-reallocation-service.js';
import { ListReservationsQuery, ReallocationBody, ReservationBody, ReservationSchema } from './reservation-schemas.js';
import { commitInOneStatement, createReservation, finishReservation, reservationClosed, reserveInOneStatement } from './reservation-service.js';
import { variantKey } from './stock-repository.js';

/** The body limit of a reallocation: every body its schema allows, and a little more, is read and answered by validation. */
const REALLOCATION_BODY_LIMIT = 1024 * 1024;

const ReservationReply = Type.Ref(ReservationSchema);

/** Units held for a checkout: all lines or none, then committed, released or expired. */
export const reservationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/reservations',
    {
      config: { access: { roles: STAFF, scope: 'reservations:write' } },
      schema: {
        operationId: 'createReservation',
        tags: ['inventory'],
        summary: 'Hold units of one or more variants, all or nothing (manager, admin)',
        description:
          'Needs `available` >= `quantity` on every line, checked under the rows\' locks, and adds the quantities to `reserved`. ' +
          'Where (API.md section 21): a line naming `location_id` takes its units only there (unknown: 404 with its path; inactive: ' +
          '409 `location_inactive`); otherwise the whole line from the first active location, by priority then code, that has it ' +
          'available, else greedily over the active locations in that order unless `split` is false. Each line answers its ' +
          '`allocations` (by location id); the `reservation.created` event lists the lines as asked. ' +
          'Lines that fall short are each listed in a 409 `insufficient_stock`; a line naming no variant is a 404 with its path. ' +
          'Unless committed or released, the reservation expires within 10 s after `expires_at` and its units are available again.',
        headers: Type.Object({ 'idempotency-key': IdempotencyKeyHeader }),
        body: ReservationBody,
        response: { 201: idempotentReply(resourceReply(ReservationReply, 'Created.', { location: true, etag: false })), ...problemResponses(400, 401, 403, 404, 409, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      const location = (reservation: Reservation) => `/api/reservations/${reservation.id}`;
      // A flash sale's reservation (one line, no Idempotency-Key) is one statement, the caller
      // checked in it; anything it did not write is done, or refused, in a transaction.
      if (request.headers['idempotency-key'] === undefined && request.body.lines.length === 1) {
        const reservation = await request.access.oneStatement((db, letIn, actor) => reserveInOneStatement(db, request.body, contextOf({ id: request.id, access: { actor } }), letIn));
        if (reservation) return reply.code(201).header('location', location(reservation)).send(toReservationResponse(reservation));
      }
      return replyOnce(request.access, request, reply, async (trx) => {
        const reservation = await createReservation(trx, request.body, contextOf(request));
        return { status: 201, headers: { location: location(reservation) }, body: toReservationResponse(reservation) };
      });
    },
  );

  app.get(
    '/reservations',
    {
      config: { access: { roles: STAFF, scope: 'inventory:read' } },
      schema: {
        operationId: 'listReservations',
        tags: ['inventory'],
        summary: 'Reservations, newest first (manager, admin)',
        description: '`reference` (exact) and `status` filter; both combine.',
        querystring: Type.Object({ ...PageQuery, ...ListReservationsQuery.properties }, { additionalProperties: false }),
        response: { 200: PageSchema(ReservationReply), ...problemResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const { access } = request;
      const filter = { reference: request.query.reference, status: request.query.status };
      return listPage(request.query, access, {
        rows: async (page) => {
          const rows = await access.readPage((db) => reservationsPage(db, filter, page));
          return withLinesOfPage((await access.admit()).db, rows);
        },
        count: (db) => countReservations(db, filter),
        toItem: toReservationResponse,
      });
    },
  );

  app.get(
    '/reservations/:id',
    {
      // Either scope opens it: a checkout reads back the reservation it made.
      config: { access: { roles: STAFF, scope: ['inventory:read', 'reservations:write'] } },
      schema: {
        operationId: 'getReservation',
        tags: ['inventory'],
        summary: 'One reservation (manager, admin)',
        params: IdParams,
        response: { 200: resourceReply(ReservationReply, 'The reservation.', { etag: false }), ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { access } = request;
      const [row] = await access.read(reservationById, request.params.id);
      if (!row) throw notFound('reservation');
      const [reservation] = await withLinesOfPage((await access.admit()).db, [row]);
      return toReservationResponse(reservation!);
    },
  );

  app.get(
    '/variants/:id/reservations',
    {
      config: { access: { roles: STAFF, scope: 'inventory:read' } },
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
      const { access } = request;
      const variantId = request.params.id;
      if ((await access.read(variantKey, variantId)).length === 0) throw notFound('variant');
      const { db } = await access.admit();
      return listPage(request.query, access, {
        rows: async (page) => withLinesOfPage(db, await activeReservationsOfVariantPage(db, variantId, page).execute()),
        count: (db) => countActiveReservationsOfVariant(db, variantId),
        toItem: toReservationResponse,
      });
    },
  );

  app.post(
    '/reservations/:id/reallocate',
    {
      config: { access: { roles: STAFF, scope: 'reservations:write' } },
      // Its largest valid body (100 lines of 100 allocations, about 620 KB) must reach validation, and so must one a line or an allocation over.
      bodyLimit: REALLOCATION_BODY_LIMIT,
      schema: {
        operationId: 'reallocateReservation',
        tags: ['inventory'],
        summary: 'Move where some lines of a reservation hold their units (manager, admin)',
        description:
          'API.md section 21, "Reallocation": replaces the allocations of the lines named (the others keep theirs), all or nothing. ' +
          "Each line's quantities sum to its `quantity` and name each location at most once, and its variant is a line of the " +
          'reservation (else 400 `validation_failed` with the paths). Each destination needs the units available counting the ' +
          "line's own current allocations there as released (else 409 `insufficient_stock` listing the lines' paths). An unknown " +
          'location is 404 with its path; an inactive one 409 `location_inactive`, unless the line keeps no more units there than ' +
          'it holds already. Only an active reservation whose `expires_at` has not passed (else 409 `reservation_closed`); an ' +
          "unknown one is 404. The variants' `stock` and `reserved` stay; their levels' `reserved` move, and `available` follows " +
          'when units move between active and inactive locations. Records `reservation.reallocated` (the contract names no event ' +
          'for it; like the reservation\'s other events, subject the reservation, `data`: the named lines\' allocations `before` ' +
          'and `after`, and `reference`); a reallocation that changes nothing writes nothing and records nothing. Honours ' +
          '`Idempotency-Key`.',
        headers: Type.Object({ 'idempotency-key': IdempotencyKeyHeader }),
        params: IdParams,
        body: ReallocationBody,
        response: { 200: idempotentReply(resourceReply(ReservationReply, 'The reservation, as GET answers it.', { etag: false })), ...problemResponses(400, 401, 403, 404, 409, 413, 415, 422) },
      },
    },
    async (request, reply) =>
      replyOnce(request.access, request, reply, async (trx) => {
        const reservation = await reallocateReservation(trx, request.params.id, request.body, contextOf(request));
        return { status: 200, body: toReservationResponse(reservation) };
      }),
  );

  for (const [action, status] of [
    ['commit', 'committed'],
    ['release', 'released'],
  ] as const) {
    app.post(
      `/reservations/:id/${action}`,
      {
        config: { access: { roles: STAFF, scope: 'reservations:write' } },
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
      async (request) => {
        // A commit of one line is one statement when it can be (reservation-service.ts); the rest, and every refusal, a transaction.
        const committed = action === 'commit' ? await request.access.oneStatement((db, letIn, actor) => commitInOneStatement(db, request.params.id, contextOf({ id: request.id, access: { actor } }), letIn)) : undefined;
        if (committed) return toReservationResponse(committed);
        const outcome = await request.access.transaction((trx) => finishReservation(trx, request.params.id, status, contextOf(request)));
        if ('closedAs' in outcome) throw reservationClosed(outcome.closedAs, status);
        return toReservationResponse(outcome);
      },
    );
  }
};
