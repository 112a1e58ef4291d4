import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { UserRow } from '../db/tables.js';
import { contextOf } from '../events/event-recorder.js';
import { IdParams } from '../http/common-schemas.js';
import { notFound } from '../http/errors.js';
import { problemResponses } from '../http/problem-schema.js';
import { ADMIN, ANY_ROLE } from '../sessions/access-rule.js';
import type { Access } from '../sessions/admission.js';
import { userById, userRecordById } from '../users/user-repository.js';
import { eraseUser } from './erasure-service.js';
import { exportDocument, recordExport } from './export-service.js';
import { EraseBody, ExportSchema } from './privacy-schemas.js';

const exportReply = {
  description: 'The data export, streamed.',
  headers: {
    'content-disposition': { description: '`attachment; filename="user-<id>.json"`', schema: { type: 'string' } },
    'cache-control': { description: '`no-store`', schema: { type: 'string' } },
  },
  content: { 'application/json': { schema: ExportSchema } },
};

/** Privacy requests (API.md section 13): data exports and erasure; self-deletion is the users area's. */
export const privacyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { currency } = app.config;

  /** Records the export (subject the user, actor the caller), then streams it. */
  async function sendExport(request: { id: string; access: Access }, reply: FastifyReply, user: UserRow) {
    const { access } = request;
    await access.transaction((trx) => recordExport(trx, user.id, contextOf(request)));
    reply.header('content-disposition', `attachment; filename="user-${user.id}.json"`).type('application/json; charset=utf-8');
    const { db } = await access.admit();
    return reply.send(Readable.from(exportDocument(db, user, currency)));
  }

  app.get(
    '/profile/export',
    {
      config: { noStore: true, access: { roles: ANY_ROLE, account: true } },
      schema: {
        operationId: 'exportProfile',
        tags: ['users', 'privacy'],
        summary: "The caller's data (a data access request)",
        description:
          'One JSON document, streamed: the user, every session (ended ones included, with addresses and user agents), confirmed ' +
          'second factors without secrets, every ledger entry, the reservations the user created, and every event whose subject or ' +
          'actor the user is. Recorded as `user.data_exported`.',
        response: { 200: exportReply, ...problemResponses(401, 403) },
      },
    },
    async (request, reply) => {
      const [user] = await request.access.read(userById, request.access.ownUserId);
      if (!user) throw notFound('user');
      return sendExport(request, reply, user);
    },
  );

  app.get(
    '/:id/export',
    {
      config: { noStore: true, access: { roles: ADMIN, stepUp: true } },
      schema: {
        operationId: 'exportUser',
        tags: ['users', 'privacy'],
        summary: "A user's data (admin)",
        description:
          'As GET /api/users/profile/export, for any user: also a deleted or an erased one (what remains). 404 for an id that never ' +
          'was a user. Recorded as `user.data_exported` with the admin as actor.',
        params: IdParams,
        response: { 200: exportReply, ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const [user] = await request.access.read(userRecordById, request.params.id.toLowerCase());
      if (!user) throw notFound('user');
      return sendExport(request, reply, user);
    },
  );

  app.post(
    '/:id/erase',
    {
      config: { access: { roles: ADMIN, stepUp: true } },
      schema: {
        operationId: 'eraseUser',
        tags: ['users', 'privacy'],
        summary: 'Erase a user (admin)',
        description:
          'Removes what identifies the person and keeps what the shop must keep, in one transaction. A live user is deleted first ' +
          '(its sessions end; 409 `last_admin` for the last active admin). Then `email` becomes `erased-<id>@erased.invalid`, `name` ' +
          '`Erased user`, `phone` null; the password, every session (with its address and user agent), second factor, recovery ' +
          'code, reset and verification token and every email to the user go; in the events about the user every `email`, `name` ' +
          'and `phone` value, at any depth, becomes `"[erased]"` (webhook deliveries not yet sent send that). Ledger entries and ' +
          'reservations stay. Recorded as `user.erased` with the reason. Erasing an erased user again is 204 and changes nothing. ' +
          '404 for an id that never was a user.',
        params: IdParams,
        body: EraseBody,
        response: { 204: Type.Null({ description: 'Erased.' }), ...problemResponses(400, 401, 403, 404, 409, 413, 415) },
      },
    },
    async (request, reply) => {
      const { access } = request;
      await access.transaction((trx) => eraseUser(trx, request.params.id.toLowerCase(), request.body.reason, contextOf(request)));
      return reply.code(204).send(null);
    },
  );
};
