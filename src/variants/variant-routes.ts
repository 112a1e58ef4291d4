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
import { countVariants, countVariantsOfProduct, findVariantById, findVariantBySku, listVariants, listVariantsOfProduct } from './variant-repository.js';
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

const STAFF = ['manager', 'admin'] as const;
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
      config: { checksCallerWithData: true },
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
      return listPage(request.query, {
        rows: (page) => listVariants(request.db, filter, page),
        count: () => countVariants(app.db, filter),
        toItem: (row) => toVariantResponse(row, currency),
      });
    },
  );

  app.post(
    '',
    {
      config: { roles: STAFF, checksCallerWithData: true },
      schema: {
        operationId: 'createVariant',
        tags: ['variants'],
        summary: 'Create a variant; the service picks its id (manager, admin)',
        description: '409 `sku_taken` (SKU taken, any case) or `duplicate_attributes` (same product, equal attributes).',
        body: VariantBody,
        response: { 201: resourceReply(VariantReply, 'Created.', { location: true }), ...problemResponses(400, 401, 403, 409, 413, 415) },
      },
    },
    async (request, reply) => created(reply, await createVariant(request.db, undefined, request.body, contextOf(request))),
  );

  app.post(
    '/batch',
    {
      config: { roles: STAFF, checksCallerWithData: true },
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
      const results = await runBatch(request.db, request.body.operations, contextOf(request));
      return {
        results: results.map(({ variant, ...result }) => ({ ...result, ...(variant ? { variant: toVariantResponse(variant, currency) } : {}) })),
      };
    },
  );

  app.get(
    '/product/:product_id',
    {
      config: { checksCallerWithData: true },
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
      return listPage(request.query, {
        rows: (page) => listVariantsOfProduct(request.db, productId, page),
        count: () => countVariantsOfProduct(app.db, productId),
        toItem: (row) => toVariantResponse(row, currency),
      });
    },
  );

  app.get(
    '/sku/:sku',
    {
      config: { checksCallerWithData: true },
      schema: {
        operationId: 'getVariantBySku',
        tags: ['variants'],
        summary: 'A variant by SKU, in any letter case',
        params: SkuParams,
        response: { 200: resourceReply(VariantReply, 'The variant.'), 304: notModifiedReply, ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const variant = await findVariantBySku(request.db, request.params.sku);
      if (!variant) throw notFound('variant');
      return variantReply(reply, variant);
    },
  );

  app.get(
    '/:id',
    {
      config: { checksCallerWithData: true },
      schema: {
        operationId: 'getVariant',
        tags: ['variants'],
        summary: 'A variant by id',
        params: IdParams,
        response: { 200: resourceReply(VariantReply, 'The variant.'), 304: notModifiedReply, ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const variant = await findVariantById(request.db, request.params.id);
      if (!variant) throw notFound('variant');
      return variantReply(reply, variant);
    },
  );

  app.post(
    '/:id',
    {
      config: { roles: STAFF, checksCallerWithData: true },
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
    async (request, reply) => created(reply, await createVariant(request.db, request.params.id, request.body, contextOf(request))),
  );

  app.put(
    '/:id',
    {
      config: { roles: STAFF, checksCallerWithData: true },
      schema: {
        operationId: 'replaceVariant',
        tags: ['variants'],
        summary: 'Replace a variant (manager, admin)',
        description: 'Same body as POST; `stock` and `attributes` left out become 0 and {}. The variant may move to another product.',
        params: IdParams,
        headers: IfMatchHeaders,
        body: VariantBody,
        response: { 200: resourceReply(VariantReply, 'Replaced.'), ...problemResponses(400, 401, 403, 404, 409, 412, 413, 415) },
      },
    },
    async (request, reply) => variantReply(reply, await updateVariant(request.db, request.params.id, request.headers['if-match'], request.body, contextOf(request))),
  );

  app.patch(
    '/:id',
    {
      config: { roles: STAFF, checksCallerWithData: true },
      schema: {
        operationId: 'patchVariant',
        tags: ['variants'],
        summary: 'Change some fields of a variant (JSON merge patch; manager, admin)',
        description: 'Send `application/merge-patch+json` or `application/json`. `{}` changes nothing and keeps the version.',
        params: IdParams,
        headers: IfMatchHeaders,
        body: VariantPatchBody,
        response: { 200: resourceReply(VariantReply, 'The variant after the change.'), ...problemResponses(400, 401, 403, 404, 409, 412, 413, 415) },
      },
    },
    async (request, reply) => variantReply(reply, await patchVariant(request.db, request.params.id, request.headers['if-match'], request.body, contextOf(request))),
  );

  app.delete(
    '/:id',
    {
      config: { roles: STAFF, checksCallerWithData: true },
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
      await removeVariant(request.db, request.params.id, request.headers['if-match'], contextOf(request));
      return reply.code(204).send(null);
    },
  );
};
