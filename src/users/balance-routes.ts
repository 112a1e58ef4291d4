import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { contextOf } from '../events/event-recorder.js';
import { IdParams } from '../http/common-schemas.js';
import { forbidden, notFound } from '../http/errors.js';
import { IdempotencyKeyHeader, replyOnce } from '../http/idempotency.js';
import { listPage, PageQuery, PageSchema } from '../http/pagination.js';
import { etagOf, IfMatchHeader } from '../http/preconditions.js';
import { problemResponses, resourceReply } from '../http/problem-schema.js';
import { countLedgerEntries, listLedgerEntries } from './balance-repository.js';
import { toLedgerEntryResponse } from './balance-response.js';
import { BalanceChangeBody, LedgerEntrySchema } from './balance-schemas.js';
import { applyBalanceChange } from './balance-service.js';
import { findUserRecordById } from './user-repository.js';
import { toUserResponse } from './user-response.js';
import { UserSchema } from './user-schemas.js';

export const balanceRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { currency } = app.config;

  app.put(
    '/:id/balance',
    {
      config: { roles: ['admin'], checksCallerWithData: true },
      schema: {
        operationId: 'changeBalance',
        tags: ['balance'],
        summary: "Change a user's store-credit balance (admin)",
        description:
          '`delta` adds atomically; `balance` sets. Every change, a set to the same value included, writes a ledger ' +
          'entry in the same transaction. Below zero: 409 `insufficient_funds`; above 1e15: 400 `validation_failed`.',
        params: IdParams,
        headers: Type.Object({ 'idempotency-key': IdempotencyKeyHeader, 'if-match': IfMatchHeader }),
        body: BalanceChangeBody,
        response: {
          200: resourceReply(Type.Ref(UserSchema), 'The user after the change.'),
          ...problemResponses(400, 401, 403, 404, 409, 412, 413, 415, 422),
        },
      },
    },
    async (request, reply) =>
      replyOnce(request.db, request, reply, request.identity.userId, async (trx) => {
        const user = await applyBalanceChange(trx, {
          userId: request.params.id,
          context: contextOf(request),
          currency,
          ifMatch: request.headers['if-match'],
          change: request.body,
        });
        return { status: 200, headers: { etag: etagOf(user.version) }, body: toUserResponse(user, currency) };
      }),
  );

  app.get(
    '/:id/balance/ledger',
    {
      config: { checksCallerWithData: true },
      schema: {
        operationId: 'listLedgerEntries',
        tags: ['balance'],
        summary: "A user's balance ledger, newest first (admin, or the user itself)",
        description: 'An admin can still read the ledger of a deleted user.',
        params: IdParams,
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: PageSchema(Type.Ref(LedgerEntrySchema)), ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const userId = request.params.id;
      const record = await findUserRecordById(request.db, userId);
      // The role rule comes before the 404: a customer learns nothing of other ids.
      if (request.caller.role !== 'admin' && request.caller.id !== userId) throw forbidden();
      const owner = request.caller.role === 'admin' ? record : record && record.deleted_at === null ? record : undefined;
      if (!owner) throw notFound('user');
      return listPage(request.query, {
        rows: (page) => listLedgerEntries(app.db, userId, page),
        count: () => countLedgerEntries(app.db, userId),
        toItem: toLedgerEntryResponse,
      });
    },
  );
};
