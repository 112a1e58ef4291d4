import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { IdParams } from '../http/common-schemas.js';
import { PROBLEM_CONTENT_TYPE } from '../http/error-handler.js';
import { setEtag } from '../http/etag.js';
import { forbidden, notFound } from '../http/errors.js';
import { PageQuery, PageSchema, pageRequest, toPage } from '../http/pagination.js';
import { problemResponses } from '../http/problem-schema.js';
import { inTransaction } from '../db/transaction.js';
import { applyBalanceChange, countLedgerEntries, listLedgerEntries, toLedgerEntryResponse } from './balance-ledger.js';
import { BalanceChangeBody, BalanceHeaders, LedgerEntrySchema } from './balance-schemas.js';
import { requestFingerprint, runIdempotently, type StoredReply } from './idempotency-keys.js';
import { findUserById } from './user-repository.js';
import { toUserResponse } from './user-response.js';
import { UserSchema } from './user-schemas.js';

export const balanceRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { currency } = app.config;

  app.put(
    '/:id/balance',
    {
      config: { roles: ['admin'] },
      schema: {
        tags: ['balance'],
        summary: "Change a user's store-credit balance (admin)",
        description:
          '`delta` adds atomically; `balance` sets. Every change, a set to the same value included, writes a ledger ' +
          'entry in the same transaction. Below zero: 409 `insufficient_funds`; above 1e15: 400 `validation_failed`.',
        params: IdParams,
        headers: BalanceHeaders,
        body: BalanceChangeBody,
        response: {
          200: Type.Ref(UserSchema),
          ...problemResponses(400, 401, 403, 404, 409, 412, 413, 415, 422),
        },
      },
    },
    async (request, reply) => {
      const userId = request.params.id.toLowerCase();
      const change = request.body;
      const ifMatch = request.headers['if-match'];
      const work = async (trx: Parameters<Parameters<typeof inTransaction>[1]>[0]): Promise<StoredReply> => {
        const user = await applyBalanceChange(trx, { userId, actorId: request.caller.id, currency, ifMatch, change });
        return { status: 200, body: toUserResponse(user, currency) };
      };
      const key = request.headers['idempotency-key'];
      const result = key
        ? await runIdempotently(
            app.db,
            { ownerId: request.caller.id, key, fingerprint: requestFingerprint('PUT', `/api/users/${userId}/balance`, change) },
            work,
          )
        : await inTransaction(app.db, work);
      // The reply may be a replay, of a success or of a refusal, so it is sent as stored.
      const rawReply = reply as FastifyReply;
      if (result.status >= 400) return rawReply.code(result.status).type(PROBLEM_CONTENT_TYPE).send(result.body);
      setEtag(reply, (result.body as { version: number }).version);
      return rawReply.code(result.status).send(result.body);
    },
  );

  app.get(
    '/:id/balance/ledger',
    {
      schema: {
        tags: ['balance'],
        summary: "A user's balance ledger, newest first (admin, or the user itself)",
        params: IdParams,
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: PageSchema(Type.Ref(LedgerEntrySchema)), ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const userId = request.params.id.toLowerCase();
      if (request.caller.role !== 'admin' && request.caller.id !== userId) throw forbidden();
      if (!(await findUserById(app.db, userId))) throw notFound('user');
      const page = pageRequest(request.query);
      const rows = await listLedgerEntries(app.db, userId, page);
      const body = toPage(rows, page.limit, toLedgerEntryResponse);
      return request.query.include_total ? { ...body, total: await countLedgerEntries(app.db, userId) } : body;
    },
  );
};
