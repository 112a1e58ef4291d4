import * as eventRepository from '../../src/events/event-repository.js';
import * as webhookRepository from '../../src/events/webhook-repository.js';
import type { DeliveryRow } from '../../src/db/tables.js';
import { call, callerReadSample, custom, FIRST_PAGE, NEXT_PAGE, SAMPLE, type RepositoryFile } from './sample.js';


export const events: RepositoryFile[] = [
  {
    file: 'src/events/event-repository.ts',
    area: 'events',
    entries: {
      eventsPage: call(eventRepository.eventsPage, { types: ['variant.created'], actorType: 'user' }, NEXT_PAGE),
      countEvents: call(eventRepository.countEvents, { types: ['variant.created'], actorType: 'user' }),
      eventById: callerReadSample(eventRepository.eventById, SAMPLE.eventId),
      deleteEventsBefore: call(eventRepository.deleteEventsBefore, SAMPLE.date),
      subjectEventsPage: call(eventRepository.subjectEventsPage, SAMPLE.userId, FIRST_PAGE),
      actorEventsAboutOthersPage: call(eventRepository.actorEventsAboutOthersPage, SAMPLE.userId, FIRST_PAGE),
      // The sample event about the user holds an email: read a page, then write the scrubbed data.
      erasePersonalValues: call(eventRepository.erasePersonalValues, SAMPLE.userId),
    },
  },
  {
    file: 'src/events/webhook-repository.ts',
    area: 'events',
    entries: {
      webhookById: callerReadSample(webhookRepository.webhookById, SAMPLE.webhookId),
      // The delivery queue's settle (jobs/work-queue.ts): a failed attempt, retried later, under its claim.
      settleDelivery: custom('the sample delivery under its claim, a retry in 60 s', (trx) =>
        webhookRepository.settleDelivery(trx, { id: SAMPLE.deliveryId, claim_token: '00000000-0000-4000-8000-000000000015' } as DeliveryRow, { outcome: 'retry', error: 'HTTP 503', retryDelaySeconds: 60 }),
      ),
      findWebhookByIdForUpdate: call(webhookRepository.findWebhookByIdForUpdate, SAMPLE.webhookId),
      insertWebhook: call(webhookRepository.insertWebhook, {
        id: SAMPLE.newId,
        url: 'https://example.com/other',
        events: ['variant.updated'],
        description: null,
        enabled: true,
        secret: 'whsec-2',
        created_at: SAMPLE.date,
        updated_at: SAMPLE.date,
      }),
      updateWebhook: call(webhookRepository.updateWebhook, SAMPLE.webhookId, { enabled: false }),
      deleteWebhook: call(webhookRepository.deleteWebhook, SAMPLE.webhookId),
      webhooksPage: call(webhookRepository.webhooksPage, FIRST_PAGE),
      countWebhooks: call(webhookRepository.countWebhooks),
      countDeliveries: call(webhookRepository.countDeliveries, SAMPLE.webhookId),
      deliveriesPage: call(webhookRepository.deliveriesPage, SAMPLE.webhookId, NEXT_PAGE),
      findDelivery: call(webhookRepository.findDelivery, SAMPLE.webhookId, SAMPLE.deliveryId),
      lockDelivery: call(webhookRepository.lockDelivery, SAMPLE.webhookId, SAMPLE.deliveryId),
      requeueDelivery: call(webhookRepository.requeueDelivery, SAMPLE.deliveryId),
    },
  },
];
