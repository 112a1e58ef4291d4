import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { contextOf } from '../events/event-recorder.js';
import { IdParams } from '../http/common-schemas.js';
import { notFound } from '../http/errors.js';
import { IdempotencyKeyHeader, idempotentReply, replyOnce } from '../http/idempotency.js';
import { listPage, PageQuery, PageSchema } from '../http/pagination.js';
import { etagOf, IfMatchHeader } from '../http/preconditions.js';
import { problemResponses, resourceReply } from '../http/problem-schema.js';
import { countStockMovements, stockMovementsPage } from '../inventory/stock-movement-repository.js';
import { toMovementResponse } from '../inventory/stock-response.js';
import { variantKey } from '../inventory/stock-repository.js';
import { AdjustmentBody, StockChangeBody, StockMovementSchema } from '../inventory/stock-schemas.js';
import { adjustStock, changeStock } from '../inventory/stock-service.js';
import { STAFF } from '../sessions/access-rule.js';
import { toVariantResponse } from './variant-response.js';
import { VariantSchema } from './variant-schemas.js';

/** A variant's stock over HTTP: inventory (the one owner of stock) moves it; these routes show the variants. */
export const variantStockRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { currency } = app.config;
  const adjustments = app.metrics.counter({
    name: 'stock_adjustments_total',
    help: 'Stock changes made (not replayed), by kind: one variant (PUT .../stock) or several (POST /api/stock-adjustments).',
    labelNames: ['kind'],
  });

  app.put(
    '/variants/:id/stock',
    {
      config: { access: { roles: STAFF, scope: 'inventory:write' } },
      schema: {
        operationId: 'changeStock',
        tags: ['inventory'],
        summary: "Move a variant's stock by a delta, or set it (manager, admin)",
        description:
          'Writes one stock movement and moves the version. Below `reserved`: 409 `insufficient_stock`; above 1e9: 400. ' +
          'A set to the same value writes a movement with delta 0.',
        params: IdParams,
        headers: Type.Object({ 'idempotency-key': IdempotencyKeyHeader, 'if-match': IfMatchHeader }),
        body: StockChangeBody,
        response: { 200: idempotentReply(resourceReply(Type.Ref(VariantSchema), 'The variant after the movement.')), ...problemResponses(400, 401, 403, 404, 409, 412, 413, 415, 422) },
      },
    },
    async (request, reply) =>
      replyOnce(request.access, request, reply, async (trx) => {
        const { reason, reference, ...change } = request.body;
        const note = { reason, reference: reference ?? null, context: contextOf(request) };
        const variant = await changeStock(trx, request.params.id, request.headers['if-match'], change as { delta: number } | { stock: number }, note);
        adjustments.inc({ kind: 'single' });
        return { status: 200, headers: { etag: etagOf(variant.version) }, body: toVariantResponse(variant, currency) };
      }),
  );

  app.get(
    '/variants/:id/stock/movements',
    {
      config: { access: { roles: STAFF, scope: 'inventory:read' } },
      schema: {
        operationId: 'listStockMovements',
        tags: ['inventory'],
        summary: "A variant's stock movements, newest first (manager, admin)",
        params: IdParams,
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: PageSchema(Type.Ref(StockMovementSchema)), ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { access } = request;
      const variantId = request.params.id;
      if ((await access.read(variantKey, variantId)).length === 0) throw notFound('variant');
      const { db } = await access.admit();
      return listPage(request.query, access, {
        rows: (page) => stockMovementsPage(db, variantId, page).execute(),
        count: (db) => countStockMovements(db, variantId),
        toItem: toMovementResponse,
      });
    },
  );

  app.post(
    '/stock-adjustments',
    {
      config: { access: { roles: STAFF, scope: 'inventory:write' } },
      schema: {
        operationId: 'adjustStock',
        tags: ['inventory'],
        summary: 'Move the stock of several variants at once, all or nothing (manager, admin)',
        description:
          'A line naming no variant is 404 with its path; lines that would go below `reserved` are 409 `insufficient_stock`, ' +
          'each listed in `errors`. The reply lists the variants in the order of the lines.',
        headers: Type.Object({ 'idempotency-key': IdempotencyKeyHeader }),
        body: AdjustmentBody,
        response: { 200: idempotentReply({ description: 'The variants, in the order of the lines.', content: { 'application/json': { schema: Type.Object({ items: Type.Array(Type.Ref(VariantSchema)) }) } } }), ...problemResponses(400, 401, 403, 404, 409, 413, 415, 422) },
      },
    },
    async (request, reply) =>
      replyOnce(request.access, request, reply, async (trx) => {
        const note = { reason: request.body.reason, reference: request.body.reference ?? null, context: contextOf(request) };
        const variants = await adjustStock(trx, request.body.lines, note);
        adjustments.inc({ kind: 'multi-line' });
        return { status: 200, body: { items: variants.map((variant) => toVariantResponse(variant, currency)) } };
      }),
  );
};
