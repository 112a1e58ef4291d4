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
import { toMovementResponse, toVariantStockResponse } from '../inventory/stock-response.js';
import { variantKey } from '../inventory/stock-repository.js';
import { AdjustmentBody, StockChangeBody, StockMovementSchema, TransferBody, VariantStockSchema } from '../inventory/stock-schemas.js';
import { transferStock } from '../inventory/stock-transfer-service.js';
import { adjustStock, changeStock, levelsAtEveryLocation } from '../inventory/stock-service.js';
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
  const transfers = app.metrics.counter({ name: 'stock_transfers_total', help: 'Stock transfers made (not replayed).' });

  app.put(
    '/variants/:id/stock',
    {
      config: { access: { roles: STAFF, scope: 'inventory:write' } },
      schema: {
        operationId: 'changeStock',
        tags: ['inventory'],
        summary: "Move a variant's stock by a delta, or set it (manager, admin)",
        description:
          'Applies at `location_id` (default: the default location; an unknown one is 404 with `errors` naming `/location_id`; an ' +
          'inactive one may be corrected). Writes one stock movement there and moves the version. Below the location\'s `reserved`: ' +
          '409 `insufficient_stock`; above 1e9 at the location or in total: 400. A set to the same value writes a movement with delta 0.',
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
    '/variants/:id/stock',
    {
      config: { access: { roles: STAFF, scope: 'inventory:read' } },
      schema: {
        operationId: 'getVariantStock',
        tags: ['inventory'],
        summary: "A variant's stock at every location (manager, admin)",
        description:
          'Every location, by priority then code, zeros included. `stock` and `reserved` are the sums over every location (the ' +
          "variant's own); `available` sums the `available` of active locations only. 404 for an unknown variant.",
        params: IdParams,
        response: { 200: Type.Ref(VariantStockSchema), ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { access } = request;
      const variantId = request.params.id.toLowerCase();
      if ((await access.read(variantKey, variantId)).length === 0) throw notFound('variant');
      const { db } = await access.admit();
      return toVariantStockResponse(variantId, await levelsAtEveryLocation(db, variantId));
    },
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
          'Each line applies at its `location_id` (default: the default location); a pair of variant and location named twice is ' +
          '400. A line naming no variant or no location is 404 with its path; lines that would go below the location\'s `reserved` ' +
          'are 409 `insufficient_stock`, each listed in `errors`. The reply lists the variants in the order of the lines (a variant ' +
          'on several lines as the last left it).',
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

  app.post(
    '/stock-transfers',
    {
      config: { access: { roles: STAFF, scope: 'inventory:write' } },
      schema: {
        operationId: 'transferStock',
        tags: ['inventory'],
        summary: 'Move units of several variants from one location to another, all or nothing (manager, admin)',
        description:
          'One movement out of `from_location_id` and one into `to_location_id` per line, each with the transfer\'s `reason` and ' +
          '`reference` and its own `variant.stock_changed` (the variant\'s total is the same after). The same location twice is ' +
          '400 `validation_failed`; an unknown location or variant is 404 with its path; an inactive destination is 409 ' +
          '`location_inactive` (transfers out of an inactive location are allowed); lines that would take the source below its ' +
          '`reserved` are 409 `insufficient_stock`, each listed in `errors`. The reply lists the variants in the order of the lines.',
        headers: Type.Object({ 'idempotency-key': IdempotencyKeyHeader }),
        body: TransferBody,
        response: {
          200: idempotentReply({ description: 'The variants, in the order of the lines.', content: { 'application/json': { schema: Type.Object({ items: Type.Array(Type.Ref(VariantSchema)) }) } } }),
          ...problemResponses(400, 401, 403, 404, 409, 413, 415, 422),
        },
      },
    },
    async (request, reply) =>
      replyOnce(request.access, request, reply, async (trx) => {
        const { reason, reference, ...transfer } = request.body;
        const variants = await transferStock(trx, transfer, { reason, reference: reference ?? null, context: contextOf(request) });
        transfers.inc();
        return { status: 200, body: { items: variants.map((variant) => toVariantResponse(variant, currency)) } };
      }),
  );
};
