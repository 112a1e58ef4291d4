import type { FastifyInstance } from 'fastify';
import type { DatabaseHandle } from '../db/database.js';
import fastifyPlugin from 'fastify-plugin';
import { deleteEventsBefore } from './event-repository.js';
import { eventRoutes } from './event-routes.js';
import { EventSchema } from './event-schemas.js';
import { queueStats } from '../jobs/work-queue.js';
import { outsideAnyTrace } from '../tracing.js';
import { webhookDeliveryQueue } from './webhook-delivery.js';
import { webhookRoutes } from './webhook-routes.js';
import { DeliverySchema, WebhookSchema } from './webhook-schemas.js';
import type { JobRunner } from '../jobs/job-runner.js';

const DAY_MS = 24 * 60 * 60 * 1000;


/** The audit API, webhooks, and the two loops every instance runs: delivery and retention. */
export const eventsPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { database: DatabaseHandle; jobs: JobRunner }) => {
    const { config } = app;
    const { db } = options.database;
    for (const schema of [EventSchema, WebhookSchema, DeliverySchema]) app.addSchema(schema);
    const rules = { allowHttp: config.webhookAllowHttp, allowPrivateNetworks: config.webhookAllowPrivateNetworks };
    app.metrics.queue('webhook_queue', 'Webhook deliveries due and not yet delivered', () => queueStats(db, 'webhook_deliveries'));
    const deliveries = options.jobs.addQueue(db, webhookDeliveryQueue(db, rules));
    // A ping or a retry wakes the delivery loop, so the attempt comes at once. The routes get
    // this and not the queue, which holds the database.
    const wakeDeliveries = () => {
      outsideAnyTrace(() => deliveries.pass()).catch((error: unknown) => app.log.warn({ err: error }, 'could not start a webhook delivery'));
    };
    await app.register(eventRoutes, { prefix: '/api/events' });
    await app.register(webhookRoutes, { prefix: '/api/webhooks', wakeDeliveries });
    options.jobs.add({
      name: 'purge-events',
      everyMs: 60 * 60 * 1000,
      run: () => deleteEventsBefore(db, new Date(Date.now() - config.eventRetentionDays * DAY_MS)),
    });
  },
  { name: 'events', dependencies: ['sessions', 'http-frame', 'metrics'] },
);
