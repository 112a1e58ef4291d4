import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { WebhookRow } from '../db/tables.js';
import { IdParams } from '../http/common-schemas.js';
import { notFound } from '../http/errors.js';
import { listPage, PageQuery, PageSchema } from '../http/pagination.js';
import { IfMatchHeaders, setEtag } from '../http/preconditions.js';
import { notModifiedReply, problemResponses, resourceReply } from '../http/problem-schema.js';
import { ADMIN } from '../sessions/access-rule.js';
import type { Access } from '../sessions/admission.js';
import { contextOf } from './event-recorder.js';
import { countDeliveries, countWebhooks, deliveriesPage, webhookById, webhooksPage } from './webhook-repository.js';
import { toDeliveryResponse, toWebhookResponse } from './webhook-response.js';
import { CreatedWebhookSchema, CreateWebhookBody, DeliverySchema, UpdateWebhookBody, WebhookSchema } from './webhook-schemas.js';
import { assertDeliverable, createWebhook, pingWebhook, removeWebhook, replaceWebhook, retryDelivery } from './webhook-service.js';

/** Webhooks are an admin's, and never an API client's. */
const ADMINS = { roles: ADMIN, directSignInOnly: true } as const;
/** Creating, replacing and deleting a webhook need a fresh second factor. */
const ADMINS_STEPPED_UP = { roles: ADMIN, stepUp: true, directSignInOnly: true } as const;
const WebhookReply = Type.Ref(WebhookSchema);
const DeliveryParams = Type.Object({ id: IdParams.properties.id, delivery_id: IdParams.properties.id });

/** `wakeDeliveries`: the attempt comes at once, the delivery loop woken rather than left to its next tick. */
export const webhookRoutes: FastifyPluginAsyncTypebox<{ wakeDeliveries: () => void }> = async (app, { wakeDeliveries }) => {
  const rules = { allowHttp: app.config.webhookAllowHttp, allowPrivateNetworks: app.config.webhookAllowPrivateNetworks };
  const webhookReply = (reply: FastifyReply, row: WebhookRow) => {
    setEtag(reply, row.version);
    return toWebhookResponse(row);
  };
  /** The webhook the path names, read beside the caller's admission; 404 when there is none. */
  const existing = async (access: Access, id: string) => {
    const [webhook] = await access.read(webhookById, id);
    if (!webhook) throw notFound('webhook');
    return webhook;
  };

  app.post(
    '',
    {
      config: { access: ADMINS_STEPPED_UP, noStore: true },
      schema: {
        operationId: 'createWebhook',
        tags: ['webhooks'],
        summary: 'Subscribe a URL to events (admin); the reply shows its secret once',
        body: CreateWebhookBody,
        response: { 201: resourceReply(CreatedWebhookSchema, 'Created, with its secret.', { location: true }), ...problemResponses(400, 401, 403, 413, 415) },
      },
    },
    async (request, reply) => {
      const { access } = request;
      // The caller is admitted before the URL's host is resolved: nobody unadmitted makes the service look a host up.
      await access.admit();
      await assertDeliverable(request.body.url, rules);
      const webhook = await access.transaction((trx) => createWebhook(trx, request.body, contextOf(request)));
      reply.header('location', `/api/webhooks/${webhook.id}`);
      return reply.code(201).send({ ...webhookReply(reply, webhook), secret: webhook.secret });
    },
  );

  app.get(
    '',
    {
      config: { access: ADMINS },
      schema: {
        operationId: 'listWebhooks',
        tags: ['webhooks'],
        summary: 'The webhooks, newest first (admin); no secrets',
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: PageSchema(WebhookReply), ...problemResponses(400, 401, 403) },
      },
    },
    async (request) =>
      listPage(request.query, request.access, {
        rows: (page) => request.access.readPage((db) => webhooksPage(db, page)),
        count: (db) => countWebhooks(db),
        toItem: toWebhookResponse,
      }),
  );

  app.get(
    '/:id',
    {
      config: { access: ADMINS },
      schema: {
        operationId: 'getWebhook',
        tags: ['webhooks'],
        summary: 'One webhook (admin); no secret',
        params: IdParams,
        response: { 200: resourceReply(WebhookReply, 'The webhook.'), 304: notModifiedReply, ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => webhookReply(reply, await existing(request.access, request.params.id)),
  );

  app.put(
    '/:id',
    {
      config: { access: ADMINS_STEPPED_UP },
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
      const { access } = request;
      // Read first, with the admission: only an admitted admin makes the new URL's host resolve,
      // and the lookup holds no transaction open.
      await existing(access, request.params.id);
      await assertDeliverable(request.body.url, rules);
      return webhookReply(reply, await access.transaction((trx) => replaceWebhook(trx, request.params.id, request.headers['if-match'], request.body, contextOf(request))));
    },
  );

  app.delete(
    '/:id',
    {
      config: { access: ADMINS_STEPPED_UP },
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
      await request.access.transaction((trx) => removeWebhook(trx, request.params.id, request.headers['if-match'], contextOf(request)));
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/:id/deliveries',
    {
      config: { access: ADMINS },
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
      const { access } = request;
      const webhook = await existing(access, request.params.id);
      const { db } = await access.admit();
      return listPage(request.query, access, {
        rows: (page) => deliveriesPage(db, webhook.id, page).execute(),
        count: (db) => countDeliveries(db, webhook.id),
        toItem: toDeliveryResponse,
      });
    },
  );

  app.post(
    '/:id/ping',
    {
      config: { access: ADMINS },
      schema: {
        operationId: 'pingWebhook',
        tags: ['webhooks'],
        summary: 'Send a test event to a webhook (admin)',
        description:
          'Delivers a `webhook.ping` event (subject the webhook, `data: {webhook_id}`) to this webhook alone, whatever it ' +
          'subscribes to, signed like any delivery; a disabled webhook is pinged too, to test its endpoint before enabling it ' +
          'again. The ping is not kept in the audit log. 202 with the delivery, which then shows the attempt. No body.',
        params: IdParams,
        response: { 202: Type.Ref(DeliverySchema), ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const delivery = await request.access.transaction((trx) => pingWebhook(trx, request.params.id, contextOf(request)));
      wakeDeliveries();
      return reply.code(202).send(toDeliveryResponse(delivery));
    },
  );

  app.post(
    '/:id/deliveries/:delivery_id/retry',
    {
      config: { access: ADMINS },
      schema: {
        operationId: 'retryWebhookDelivery',
        tags: ['webhooks'],
        summary: 'Attempt a delivery again, now (admin)',
        description:
          'The delivery is due at once, whatever its status (a failed or a succeeded one is sent again); its `attempts` go on ' +
          'counting. A delivery being attempted right now is left to that attempt. A disabled webhook: 409 `webhook_disabled`. ' +
          '202 with the delivery. No body.',
        params: DeliveryParams,
        response: { 202: Type.Ref(DeliverySchema), ...problemResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      const delivery = await request.access.transaction((trx) => retryDelivery(trx, request.params.id, request.params.delivery_id.toLowerCase()));
      wakeDeliveries();
      return reply.code(202).send(toDeliveryResponse(delivery));
    },
  );
};
