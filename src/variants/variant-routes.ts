import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { VariantRow } from '../db/tables.js';
import { IdParams } from '../http/common-schemas.js';
import { IfMatchHeaders, setEtag } from '../http/etag.js';
import { notFound } from '../http/errors.js';
import { PageQuery, PageSchema, pageRequest, toPage } from '../http/pagination.js';
import { problemResponses } from '../http/problem-schema.js';
import { countVariantsOfProduct, findVariantById, findVariantBySku, listVariantsOfProduct } from './variant-repository.js';
import { ProductParams, SkuParams, VariantBody, VariantSchema, type VariantResponse } from './variant-schemas.js';
import { createVariant, removeVariant, updateVariant } from './variant-service.js';

const STAFF = ['manager', 'admin'] as const;
const VariantReply = Type.Ref(VariantSchema);

export function toVariantResponse(row: VariantRow, currency: string): VariantResponse {
  return {
    id: row.id,
    product_id: row.product_id,
    sku: row.sku,
    name: row.name,
    price: row.price,
    currency,
    stock: row.stock,
    attributes: row.attributes,
    version: row.version,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export const variantRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { currency } = app.config;

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
      const page = pageRequest(request.query);
      const rows = await listVariantsOfProduct(app.db, productId, page);
      const body = toPage(rows, page.limit, (row) => toVariantResponse(row, currency));
      return request.query.include_total ? { ...body, total: await countVariantsOfProduct(app.db, productId) } : body;
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
      setEtag(reply, variant.version);
      return toVariantResponse(variant, currency);
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
      const variant = await findVariantById(app.db, request.params.id.toLowerCase());
      if (!variant) throw notFound('variant');
      setEtag(reply, variant.version);
      return toVariantResponse(variant, currency);
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
      const variant = await createVariant(app.db, request.params.id.toLowerCase(), request.body);
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
      const variant = await updateVariant(app.db, request.params.id.toLowerCase(), request.headers['if-match'], request.body);
      setEtag(reply, variant.version);
      return toVariantResponse(variant, currency);
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
      await removeVariant(app.db, request.params.id.toLowerCase(), request.headers['if-match']);
      return reply.code(204).send(null);
    },
  );
};
