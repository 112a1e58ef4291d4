import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { VariantRow } from '../db/tables.js';
import { IdParams } from '../http/common-schemas.js';
import { notFound } from '../http/errors.js';
import { listPage, PageQuery, PageSchema } from '../http/pagination.js';
import { IfMatchHeaders, setEtag } from '../http/preconditions.js';
import { problemResponses } from '../http/problem-schema.js';
import { countVariantsOfProduct, findVariantById, findVariantBySku, listVariantsOfProduct } from './variant-repository.js';
import { toVariantResponse } from './variant-response.js';
import { ProductParams, SkuParams, VariantBody, VariantSchema } from './variant-schemas.js';
import { createVariant, removeVariant, updateVariant } from './variant-service.js';

const STAFF = ['manager', 'admin'] as const;
const VariantReply = Type.Ref(VariantSchema);

export const variantRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { currency } = app.config;
  /** A single variant reply: its ETag and its body. */
  const variantReply = (reply: FastifyReply, row: VariantRow) => {
    setEtag(reply, row.version);
    return toVariantResponse(row, currency);
  };

  app.get(
    '/product/:product_id',
    {
      schema: {
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
        rows: (page) => listVariantsOfProduct(app.db, productId, page),
        count: () => countVariantsOfProduct(app.db, productId),
        toItem: (row) => toVariantResponse(row, currency),
      });
    },
  );

  app.get(
    '/sku/:sku',
    {
      schema: {
        tags: ['variants'],
        summary: 'A variant by SKU, in any letter case',
        params: SkuParams,
        response: { 200: VariantReply, ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const variant = await findVariantBySku(app.db, request.params.sku);
      if (!variant) throw notFound('variant');
      return variantReply(reply, variant);
    },
  );

  app.get(
    '/:id',
    {
      schema: {
        tags: ['variants'],
        summary: 'A variant by id',
        params: IdParams,
        response: { 200: VariantReply, ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const variant = await findVariantById(app.db, request.params.id);
      if (!variant) throw notFound('variant');
      return variantReply(reply, variant);
    },
  );

  app.post(
    '/:id',
    {
      config: { roles: STAFF },
      schema: {
        tags: ['variants'],
        summary: 'Create a variant under a client-chosen UUID (manager, admin)',
        description:
          '201 with Location and ETag. 409 `variant_exists` (id taken), `sku_taken` (SKU taken, any case) or ' +
          '`duplicate_attributes` (same product, equal attributes); a taken id is reported first.',
        params: IdParams,
        body: VariantBody,
        response: { 201: VariantReply, ...problemResponses(400, 401, 403, 409, 413, 415) },
      },
    },
    async (request, reply) => {
      const variant = await createVariant(app.db, request.params.id, request.body);
      setEtag(reply, variant.version);
      reply.header('location', `/api/variants/${variant.id}`);
      return reply.code(201).send(toVariantResponse(variant, currency));
    },
  );

  app.put(
    '/:id',
    {
      config: { roles: STAFF },
      schema: {
        tags: ['variants'],
        summary: 'Replace a variant (manager, admin)',
        description: 'Same body as POST; `stock` and `attributes` left out become 0 and {}. The variant may move to another product.',
        params: IdParams,
        headers: IfMatchHeaders,
        body: VariantBody,
        response: { 200: VariantReply, ...problemResponses(400, 401, 403, 404, 409, 412, 413, 415) },
      },
    },
    async (request, reply) => {
      const variant = await updateVariant(app.db, request.params.id, request.headers['if-match'], request.body);
      return variantReply(reply, variant);
    },
  );

  app.delete(
    '/:id',
    {
      config: { roles: STAFF },
      schema: {
        tags: ['variants'],
        summary: 'Delete a variant for good (manager, admin)',
        description: 'Its id and SKU may be used again.',
        params: IdParams,
        headers: IfMatchHeaders,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...problemResponses(400, 401, 403, 404, 412) },
      },
    },
    async (request, reply) => {
      await removeVariant(app.db, request.params.id, request.headers['if-match']);
      return reply.code(204).send(null);
    },
  );
};
