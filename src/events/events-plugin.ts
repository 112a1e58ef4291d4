import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { deleteEventsBefore } from './event-repository.js';
import { eventRoutes } from './event-routes.js';
import { EventSchema } from './event-schemas.js';
import { deliverDueWebhooks, deliveryQueueStats } from './webhook-delivery.js';
import { webhookRoutes } from './webhook-routes.js';
import { DeliverySchema, WebhookSchema } from './webhook-schemas.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** The audit API, webhooks, and the two loops every instance runs: delivery and retention. */
export const eventsPlugin = fastifyPlugin(
  async (app: FastifyInstance) => {
    const { config } = app;
    for (const schema of [EventSchema, WebhookSchema, DeliverySchema]) app.addSchema(schema);
    await app.register(
      async (events) => {
        events.addHook('onRequest', app.authenticate);
        await events.register(eventRoutes, { prefix: '/events' });
        await events.register(webhookRoutes, { prefix: '/webhooks' });
      },
      { prefix: '/api' },
    );
    const rules = { allowHttp: config.webhookAllowHttp, allowPrivateNetworks: config.webhookAllowPrivateNetworks };
    app.metrics.queue('webhook_queue', 'Webhook deliveries due and not yet delivered', () => deliveryQueueStats(app.db));
    app.jobs.add({ name: 'deliver-webhooks', everyMs: 1000, run: () => deliverDueWebhooks(app.db, rules) });
    app.jobs.add({
      name: 'purge-events',
      everyMs: 60 * 60 * 1000,
      run: () => deleteEventsBefore(app.db, new Date(Date.now() - config.eventRetentionDays * DAY_MS)),
    });
  },
  { name: 'events', dependencies: ['sessions', 'http-frame', 'jobs', 'metrics'] },
);
