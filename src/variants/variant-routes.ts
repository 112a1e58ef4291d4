import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { VariantRow } from '../db/tables.js';
import { contextOf } from '../events/event-recorder.js';
import { IdParams } from '../http/common-schemas.js';
import { notFound } from '../http/errors.js';
import { listPage, PageQuery, PageSchema } from '../http/pagination.js';
import { IfMatchHeaders, setEtag } from '../http/preconditions.js';
import { notModifiedReply, problemResponses, resourceReply } from '../http/problem-schema.js';
import { ANY_ROLE, STAFF } from '../sessions/access-rule.js';
import { countVariants, countVariantsOfProduct, variantById, variantBySku, variantsOfProductPage, variantsPage } from './variant-repository.js';
import { toVariantResponse } from './variant-response.js';
import {
  BatchBody,
  BatchResultSchema,
  ListVariantsQuery,
  ProductParams,
  SkuParams,
  VariantBody,
  VariantPatchBody,
  VariantSchema,
} from './variant-schemas.js';
import { createVariant, patchVariant, removeVariant, runBatch, updateVariant } from './variant-service.js';

/** Anyone signed in reads the catalogue; clients with `variants:read`. */
const READERS = { roles: ANY_ROLE, scope: 'variants:read' } as const;
/** Managers and admins change it; clients with `variants:write`. */
const WRITERS = { roles: STAFF, scope: 'variants:write' } as const;
const VariantReply = Type.Ref(VariantSchema);
const BATCH_BODY_LIMIT = 256 * 1024;

export const variantRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { currency } = app.config;
  /** A single variant reply: its ETag and its body. */
  const variantReply = (reply: FastifyReply, row: VariantRow) => {
    setEtag(reply, row.version);
    return toVariantResponse(row, currency);
  };
  const created = (reply: FastifyReply, row: VariantRow) => {
    reply.header('location', `/api/variants/${row.id}`);
    return reply.code(201).send(variantReply(reply, row));
  };

  app.get(
    '',
    {
      config: { access: READERS },
      schema: {
        operationId: 'listVariants',
        tags: ['variants'],
        summary: 'Browse and search variants, newest first',
        description: '`q` matches a case-insensitive substring of SKU or name; `in_stock=true` keeps variants with units available.',
        querystring: Type.Object({ ...PageQuery, ...ListVariantsQuery.properties }, { additionalProperties: false }),
        response: { 200: PageSchema(VariantReply), ...problemResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const { q, product_id, in_stock } = request.query;
      const filter = { q, product_id, in_stock };
      return listPage(request.query, request.access, {
        rows: (page) => request.access.readPage((db) => variantsPage(db, filter, page)),
        count: (db) => countVariants(db, filter),
        toItem: (row) => toVariantResponse(row, currency),
      });
    },
  );

  app.post(
    '',
    {
      config: { access: WRITERS },
      schema: {
        operationId: 'createVariant',
        tags: ['variants'],
        summary: 'Create a variant; the service picks its id (manager, admin)',
        description: '409 `sku_taken` (SKU taken, any case) or `duplicate_attributes` (same product, equal attributes).',
        body: VariantBody,
        response: { 201: resourceReply(VariantReply, 'Created.', { location: true }), ...problemResponses(400, 401, 403, 409, 413, 415) },
      },
    },
    async (request, reply) => created(reply, await request.access.transaction((trx) => createVariant(trx, undefined, request.body, contextOf(request)))),
  );

  app.post(
    '/batch',
    {
      config: { access: WRITERS },
      bodyLimit: BATCH_BODY_LIMIT,
      schema: {
        operationId: 'batchVariants',
        tags: ['variants'],
        summary: 'Create, replace and delete up to 100 variants in one transaction (manager, admin)',
        description:
          'All or nothing. The first operation that fails stops the batch with the status and code its single call would ' +
          'give, and `errors[0].path` names it (`/operations/3`); a request that breaks the schema is a 400 whose paths ' +
          'point into it (`/operations/3/variant/sku`). Bodies up to 256 KiB.',
        body: BatchBody,
        response: { 200: BatchResultSchema, ...problemResponses(400, 401, 403, 404, 409, 412, 413, 415) },
      },
    },
    async (request) => {
      const results = await request.access.transaction((trx) => runBatch(trx, request.body.operations, contextOf(request)));
      return {
        results: results.map(({ variant, ...result }) => ({ ...result, ...(variant ? { variant: toVariantResponse(variant, currency) } : {}) })),
      };
    },
  );

  app.get(
    '/product/:product_id',
    {
      config: { access: READERS },
      schema: {
        operationId: 'listProductVariants',
        tags: ['variants'],
        summary: "A product's variants, oldest first",
        description: 'An unknown product gives an empty page.',
        params: ProductParams,
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: PageSchema(VariantReply), ...problemResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const { product_id: productId } = request.params;
      return listPage(request.query, request.access, {
        rows: (page) => request.access.readPage((db) => variantsOfProductPage(db, productId, page)),
        count: (db) => countVariantsOfProduct(db, productId),
        toItem: (row) => toVariantResponse(row, currency),
      });
    },
  );

  app.get(
    '/sku/:sku',
    {
      config: { access: READERS },
      schema: {
        operationId: 'getVariantBySku',
        tags: ['variants'],
        summary: 'A variant by SKU, in any letter case',
        params: SkuParams,
        response: { 200: resourceReply(VariantReply, 'The variant.'), 304: notModifiedReply, ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const [variant] = await request.access.read(variantBySku, request.params.sku.toLowerCase());
      if (!variant) throw notFound('variant');
      return variantReply(reply, variant);
    },
  );

  app.get(
    '/:id',
    {
      config: { access: READERS },
      schema: {
        operationId: 'getVariant',
        tags: ['variants'],
        summary: 'A variant by id',
        params: IdParams,
        response: { 200: resourceReply(VariantReply, 'The variant.'), 304: notModifiedReply, ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const [variant] = await request.access.read(variantById, request.params.id);
      if (!variant) throw notFound('variant');
      return variantReply(reply, variant);
    },
  );

  app.post(
    '/:id',
    {
      config: { access: WRITERS },
      schema: {
        operationId: 'createVariantWithId',
        tags: ['variants'],
        summary: 'Create a variant under a client-chosen UUID (manager, admin)',
        description:
          '409 `variant_exists` (id taken), `sku_taken` (SKU taken, any case) or `duplicate_attributes` (same product, ' +
          'equal attributes); a taken id is reported first.',
        params: IdParams,
        body: VariantBody,
        response: { 201: resourceReply(VariantReply, 'Created.', { location: true }), ...problemResponses(400, 401, 403, 409, 413, 415) },
      },
    },
    async (request, reply) => created(reply, await request.access.transaction((trx) => createVariant(trx, request.params.id, request.body, contextOf(request)))),
  );

  app.put(
    '/:id',
    {
      config: { access: WRITERS },
      schema: {
        operationId: 'replaceVariant',
        tags: ['variants'],
        summary: 'Replace a variant (manager, admin)',
        description:
          'Same body as POST; `stock` and `attributes` left out become 0 and {}. The variant may move to another product. ' +
          'A change of `stock` writes a movement (reason `variant updated`) and records `variant.stock_changed`; ' +
          '`variant.updated` records only the other fields; the version moves by one either way.',
        params: IdParams,
        headers: IfMatchHeaders,
        body: VariantBody,
        response: { 200: resourceReply(VariantReply, 'Replaced.'), ...problemResponses(400, 401, 403, 404, 409, 412, 413, 415) },
      },
    },
    async (request, reply) =>
      variantReply(reply, await request.access.transaction((trx) => updateVariant(trx, request.params.id, request.headers['if-match'], request.body, contextOf(request)))),
  );

  app.patch(
    '/:id',
    {
      config: { access: WRITERS },
      schema: {
        operationId: 'patchVariant',
        tags: ['variants'],
        summary: 'Change some fields of a variant (JSON merge patch; manager, admin)',
        description:
          'Send `application/merge-patch+json` or `application/json`. `{}` changes nothing and keeps the version. A change of ' +
          '`stock` writes a movement and records `variant.stock_changed`; `variant.updated` records only the other fields.',
        params: IdParams,
        headers: IfMatchHeaders,
        body: VariantPatchBody,
        response: { 200: resourceReply(VariantReply, 'The variant after the change.'), ...problemResponses(400, 401, 403, 404, 409, 412, 413, 415) },
      },
    },
    async (request, reply) =>
      variantReply(reply, await request.access.transaction((trx) => patchVariant(trx, request.params.id, request.headers['if-match'], request.body, contextOf(request)))),
  );

  app.delete(
    '/:id',
    {
      config: { access: WRITERS },
      schema: {
        operationId: 'deleteVariant',
        tags: ['variants'],
        summary: 'Delete a variant for good (manager, admin)',
        description: 'Its id and SKU may be used again.',
        params: IdParams,
        headers: IfMatchHeaders,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...problemResponses(400, 401, 403, 404, 412) },
      },
    },
    async (request, reply) => {
      await request.access.transaction((trx) => removeVariant(trx, request.params.id, request.headers['if-match'], contextOf(request)));
      return reply.code(204).send(null);
    },
  );
};
