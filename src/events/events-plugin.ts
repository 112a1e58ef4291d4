import type { FastifyInstance } from 'fastify';
import type { DatabaseHandle } from '../db/database.js';
import type { DeliveryRow } from '../db/tables.js';
import type { WorkQueue } from '../jobs/work-queue.js';
import type { DeliveryAttemptColumns } from './webhook-repository.js';
import fastifyPlugin from 'fastify-plugin';
import { deleteEventsBefore } from './event-repository.js';
import { eventRoutes } from './event-routes.js';
import { EventSchema } from './event-schemas.js';
import { queueStats } from '../jobs/work-queue.js';
import { webhookDeliveryQueue } from './webhook-delivery.js';
import { webhookRoutes } from './webhook-routes.js';
import { DeliverySchema, WebhookSchema } from './webhook-schemas.js';

const DAY_MS = 24 * 60 * 60 * 1000;

declare module 'fastify' {
  interface FastifyInstance {
    /** The delivery loop: a ping or a retry wakes it, so the attempt comes at once. */
    webhookDeliveries: WorkQueue<DeliveryRow, DeliveryAttemptColumns>;
  }
}

/** The audit API, webhooks, and the two loops every instance runs: delivery and retention. */
export const eventsPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { database: DatabaseHandle }) => {
    const { config } = app;
    const { db } = options.database;
    for (const schema of [EventSchema, WebhookSchema, DeliverySchema]) app.addSchema(schema);
    const rules = { allowHttp: config.webhookAllowHttp, allowPrivateNetworks: config.webhookAllowPrivateNetworks };
    app.metrics.queue('webhook_queue', 'Webhook deliveries due and not yet delivered', () => queueStats(db, 'webhook_deliveries'));
    app.decorate('webhookDeliveries', app.jobs.addQueue(db, webhookDeliveryQueue(db, rules)));
    await app.register(eventRoutes, { prefix: '/api/events' });
    await app.register(webhookRoutes, { prefix: '/api/webhooks' });
    app.jobs.add({
      name: 'purge-events',
      everyMs: 60 * 60 * 1000,
      run: () => deleteEventsBefore(db, new Date(Date.now() - config.eventRetentionDays * DAY_MS)),
    });
  },
  { name: 'events', dependencies: ['sessions', 'http-frame', 'jobs', 'metrics'] },
);
