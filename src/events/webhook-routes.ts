import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database, WebhookRow } from '../db/tables.js';
import { IdParams } from '../http/common-schemas.js';
import { notFound } from '../http/errors.js';
import { listPage, PageQuery, PageSchema } from '../http/pagination.js';
import { IfMatchHeaders, setEtag } from '../http/preconditions.js';
import { notModifiedReply, problemResponses, resourceReply } from '../http/problem-schema.js';
import { countRows } from '../db/list-queries.js';
import { contextOf } from './event-recorder.js';
import { findWebhookById, listDeliveries, listWebhooks } from './webhook-repository.js';
import { toDeliveryResponse, toWebhookResponse } from './webhook-response.js';
import { CreatedWebhookSchema, CreateWebhookBody, DeliverySchema, UpdateWebhookBody, WebhookSchema } from './webhook-schemas.js';
import { createWebhook, removeWebhook, replaceWebhook } from './webhook-service.js';

const ADMIN = ['admin'] as const;
const WebhookReply = Type.Ref(WebhookSchema);

export const webhookRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const rules = { allowHttp: app.config.webhookAllowHttp, allowPrivateNetworks: app.config.webhookAllowPrivateNetworks };
  const webhookReply = (reply: FastifyReply, row: WebhookRow) => {
    setEtag(reply, row.version);
    return toWebhookResponse(row);
  };
  const existing = async (db: Kysely<Database>, id: string) => {
    const webhook = await findWebhookById(db, id);
    if (!webhook) throw notFound('webhook');
    return webhook;
  };

  app.post(
    '',
    {
      // The one write that checks its caller in a statement of its own: it has no read to carry
      // the check, and the URL's host, resolved before its transaction, must resolve only for
      // an admitted admin.
      config: { roles: ADMIN, noStore: true },
      schema: {
        operationId: 'createWebhook',
        tags: ['webhooks'],
        summary: 'Subscribe a URL to events (admin); the reply shows its secret once',
        body: CreateWebhookBody,
        response: { 201: resourceReply(CreatedWebhookSchema, 'Created, with its secret.', { location: true }), ...problemResponses(400, 401, 403, 413, 415) },
      },
    },
    async (request, reply) => {
      const webhook = await createWebhook(app.db, request.body, rules, contextOf(request));
      reply.header('location', `/api/webhooks/${webhook.id}`);
      return reply.code(201).send({ ...webhookReply(reply, webhook), secret: webhook.secret });
    },
  );

  app.get(
    '',
    {
      config: { roles: ADMIN, checksCallerWithData: true },
      schema: {
        operationId: 'listWebhooks',
        tags: ['webhooks'],
        summary: 'The webhooks, newest first (admin); no secrets',
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: PageSchema(WebhookReply), ...problemResponses(400, 401, 403) },
      },
    },
    async (request) =>
      listPage(request.query, {
        rows: (page) => listWebhooks(request.db, page),
        count: () => countRows(app.db.selectFrom('webhooks')),
        toItem: toWebhookResponse,
      }),
  );

  app.get(
    '/:id',
    {
      config: { roles: ADMIN, checksCallerWithData: true },
      schema: {
        operationId: 'getWebhook',
        tags: ['webhooks'],
        summary: 'One webhook (admin); no secret',
        params: IdParams,
        response: { 200: resourceReply(WebhookReply, 'The webhook.'), 304: notModifiedReply, ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => webhookReply(reply, await existing(request.db, request.params.id)),
  );

  app.put(
    '/:id',
    {
      // The webhook is read first, with the caller check, so that only an admitted admin can make
      // the new URL's host resolve (to refuse private addresses); the transaction comes after
      // the lookup, which holds no connection.
      config: { roles: ADMIN, checksCallerWithData: true },
      schema: {
        operationId: 'replaceWebhook',
        tags: ['webhooks'],
        summary: 'Replace a webhook, or enable or disable it (admin)',
        params: IdParams,
        headers: IfMatchHeaders,
        body: UpdateWebhookBody,
        response: { 200: resourceReply(WebhookReply, 'The webhook after the change.'), ...problemResponses(400, 401, 403, 404, 412, 413, 415) },
      },
    },
    async (request, reply) => {
      await existing(request.db, request.params.id);
      return webhookReply(reply, await replaceWebhook(app.db, request.params.id, request.headers['if-match'], request.body, rules, contextOf(request)));
    },
  );

  app.delete(
    '/:id',
    {
      config: { roles: ADMIN, checksCallerWithData: true },
      schema: {
        operationId: 'deleteWebhook',
        tags: ['webhooks'],
        summary: 'Delete a webhook and its deliveries (admin)',
        params: IdParams,
        headers: IfMatchHeaders,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...problemResponses(400, 401, 403, 404, 412) },
      },
    },
    async (request, reply) => {
      await removeWebhook(request.db, request.params.id, request.headers['if-match'], contextOf(request));
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/:id/deliveries',
    {
      config: { roles: ADMIN, checksCallerWithData: true },
      schema: {
        operationId: 'listWebhookDeliveries',
        tags: ['webhooks'],
        summary: "A webhook's deliveries, newest first (admin)",
        params: IdParams,
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: PageSchema(Type.Ref(DeliverySchema)), ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const webhook = await existing(request.db, request.params.id);
      return listPage(request.query, {
        rows: (page) => listDeliveries(app.db, webhook.id, page),
        count: () => countRows(app.db.selectFrom('webhook_deliveries').where('webhook_id', '=', webhook.id)),
        toItem: toDeliveryResponse,
      });
    },
  );
};
