import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { contextOf } from '../events/event-recorder.js';
import { IdParams } from '../http/common-schemas.js';
import { notFound } from '../http/errors.js';
import { IdempotencyKeyHeader, idempotentReply, replyOnce } from '../http/idempotency.js';
import { listPage, PageQuery, PageSchema } from '../http/pagination.js';
import { etagOf, IfMatchHeader } from '../http/preconditions.js';
import { problemResponses, resourceReply } from '../http/problem-schema.js';
import { ADMIN } from '../sessions/access-rule.js';
import { countLedgerEntries, ledgerPage } from './balance-repository.js';
import { toLedgerEntryResponse } from './balance-response.js';
import { BalanceChangeBody, LedgerEntrySchema } from './balance-schemas.js';
import { applyBalanceChange } from './balance-service.js';
import { userRecordById } from './user-repository.js';
import { toUserResponse } from './user-response.js';
import { UserSchema } from './user-schemas.js';

export const balanceRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { currency } = app.config;

  app.put(
    '/:id/balance',
    {
      config: { access: { roles: ADMIN, scope: 'balance:write', stepUp: true } },
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
          200: idempotentReply(resourceReply(Type.Ref(UserSchema), 'The user after the change.')),
          ...problemResponses(400, 401, 403, 404, 409, 412, 413, 415, 422),
        },
      },
    },
    async (request, reply) =>
      replyOnce(request.access, request, reply, async (trx) => {
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
      config: { access: { roles: ADMIN, orSelf: 'id', scope: 'balance:read', account: true } },
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
      const { access } = request;
      const userId = request.params.id;
      // A customer asking for another id is refused by the admission (403) before any 404. An
      // admin (or a client with balance:read) still reads a deleted user's ledger; a user reading
      // its own is, by being signed in, not deleted.
      const [record] = await access.read(userRecordById, userId);
      if (!record) throw notFound('user');
      const { db } = await access.admit();
      return listPage(request.query, access, {
        rows: (page) => ledgerPage(db, userId, page).execute(),
        count: (db) => countLedgerEntries(db, userId),
        toItem: toLedgerEntryResponse,
      });
    },
  );
};
