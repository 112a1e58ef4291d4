import { randomBytes, randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Database, WebhookRow } from '../db/tables.js';
import { AppError, notFound, validationFailed } from '../http/errors.js';
import { lockForWrite } from '../http/preconditions.js';
import { changedFields, record, type EventContext } from './event-recorder.js';
import type { EventType } from './event-types.js';
import { deleteWebhook, findDelivery, findWebhookByIdForUpdate, insertWebhook, lockDelivery, requeueDelivery, updateWebhook, type DeliveryWithType } from './webhook-repository.js';
import { originOf, refuseWebhookUrl, type WebhookUrlRules } from './webhook-url-guard.js';

export interface WebhookInput {
  url: string;
  events: string[];
  description?: string | undefined;
}

const FIELDS = ['url', 'events', 'description', 'enabled'] as const;
/**
 * A webhook as its events show it. The URL is cut to its origin: a path or query may hold the
 * subscriber's own secret, and every `*` subscriber receives these events.
 */
const settingsOf = (webhook: WebhookRow) => ({ url: originOf(webhook.url), events: webhook.events, description: webhook.description, enabled: webhook.enabled });
const webhookEvent = (type: EventType, id: string, data: Record<string, unknown>) => ({ type, subjectType: 'webhook' as const, subjectId: id, data });

/** The URL's host resolved now, to global unicast addresses only: 400 at `/url` otherwise. Before any transaction. */
export async function assertDeliverable(url: string, rules: WebhookUrlRules): Promise<void> {
  const refusal = await refuseWebhookUrl(url, rules);
  if (refusal) throw validationFailed('/url', refusal);
}

/** A new webhook and its secret, which only this reply shows; its URL checked before (assertDeliverable). */
export async function createWebhook(trx: Transaction<Database>, input: WebhookInput, context: EventContext): Promise<WebhookRow> {
  const now = new Date();
  const webhook = await insertWebhook(trx, {
    id: randomUUID(),
    url: input.url,
    events: input.events,
    description: input.description ?? null,
    enabled: true,
    secret: `whsec_${randomBytes(32).toString('base64')}`,
    created_at: now,
    updated_at: now,
  });
  await record(trx, webhookEvent('webhook.created', webhook.id, { after: settingsOf(webhook) }), context);
  return webhook;
}

/** Replaces a webhook; its new URL checked before (assertDeliverable). */
export async function replaceWebhook(
  trx: Transaction<Database>,
  id: string,
  ifMatch: string | undefined,
  input: WebhookInput & { enabled: boolean },
  context: EventContext,
): Promise<WebhookRow> {
  const current = await lockForWrite(() => findWebhookByIdForUpdate(trx, id), ifMatch, 'webhook');
  const updated = await updateWebhook(trx, id, {
    url: input.url,
    events: input.events,
    description: input.description ?? null,
    enabled: input.enabled,
    // Enabled again by an admin: its failures start counting afresh.
    ...(input.enabled && !current.enabled ? { failing_since: null } : {}),
  });
  await record(trx, webhookEvent('webhook.updated', id, changedFields(settingsOf(current), settingsOf(updated), [...FIELDS])), context);
  return updated;
}

export async function removeWebhook(trx: Transaction<Database>, id: string, ifMatch: string | undefined, context: EventContext): Promise<void> {
  const current = await lockForWrite(() => findWebhookByIdForUpdate(trx, id), ifMatch, 'webhook');
  await deleteWebhook(trx, id);
  await record(trx, webhookEvent('webhook.deleted', id, { before: settingsOf(current) }), context);
}

/**
 * A `webhook.ping` event for this webhook alone, whatever it subscribes to (a disabled one
 * included, to test its endpoint before enabling it again), not kept in the audit log; its
 * delivery is returned, pending.
 */
export async function pingWebhook(trx: Transaction<Database>, id: string, context: EventContext): Promise<DeliveryWithType> {
  const webhook = await findWebhookByIdForUpdate(trx, id);
  if (!webhook) throw notFound('webhook');
  const event = await record(trx, webhookEvent('webhook.ping', id, { webhook_id: id }), context, { webhookId: id });
  return (await findDeliveryOf(trx, id, event.id))!;
}

async function findDeliveryOf(trx: Transaction<Database>, webhookId: string, eventId: string): Promise<DeliveryWithType | undefined> {
  const row = await trx.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', webhookId).where('event_id', '=', eventId).executeTakeFirst();
  return row && findDelivery(trx, webhookId, row.id);
}

/** One delivery of a webhook attempted again now, its attempts counting on; a disabled webhook: 409. */
export async function retryDelivery(trx: Transaction<Database>, webhookId: string, deliveryId: string): Promise<DeliveryWithType> {
  const webhook = await findWebhookByIdForUpdate(trx, webhookId);
  const delivery = webhook && (await lockDelivery(trx, webhookId, deliveryId));
  if (!webhook || !delivery) throw notFound('delivery');
  if (!webhook.enabled) throw new AppError('webhook_disabled', 'The webhook is disabled; enable it before retrying its deliveries.');
  await requeueDelivery(trx, delivery.id);
  return (await findDelivery(trx, webhookId, deliveryId))!;
}
