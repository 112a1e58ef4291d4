import { randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database, WebhookRow } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { validationFailed } from '../http/errors.js';
import { lockForWrite } from '../http/preconditions.js';
import { changedFields, record, type EventContext } from './event-recorder.js';
import type { EventType } from './event-types.js';
import { deleteWebhook, findWebhookByIdForUpdate, insertWebhook, updateWebhook } from './webhook-repository.js';
import { refuseWebhookUrl, type WebhookUrlRules } from './webhook-url-guard.js';

export interface WebhookInput {
  url: string;
  events: string[];
  description?: string | undefined;
}

const FIELDS = ['url', 'events', 'description', 'enabled'] as const;
const settingsOf = (webhook: WebhookRow) => ({ url: webhook.url, events: webhook.events, description: webhook.description, enabled: webhook.enabled });
const webhookEvent = (type: EventType, id: string, data: Record<string, unknown>) => ({ type, subjectType: 'webhook' as const, subjectId: id, data });

async function assertDeliverable(url: string, rules: WebhookUrlRules): Promise<void> {
  const refusal = await refuseWebhookUrl(url, rules);
  if (refusal) throw validationFailed('/url', refusal);
}

/** A new webhook and its secret, which only this reply shows. */
export async function createWebhook(db: Kysely<Database>, input: WebhookInput, rules: WebhookUrlRules, context: EventContext): Promise<WebhookRow> {
  await assertDeliverable(input.url, rules);
  return inTransaction(db, async (trx) => {
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
  });
}

export async function replaceWebhook(
  db: Kysely<Database>,
  id: string,
  ifMatch: string | undefined,
  input: WebhookInput & { enabled: boolean },
  rules: WebhookUrlRules,
  context: EventContext,
): Promise<WebhookRow> {
  await assertDeliverable(input.url, rules);
  return inTransaction(db, async (trx) => {
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
  });
}

export function removeWebhook(db: Kysely<Database>, id: string, ifMatch: string | undefined, context: EventContext): Promise<void> {
  return inTransaction(db, async (trx) => {
    const current = await lockForWrite(() => findWebhookByIdForUpdate(trx, id), ifMatch, 'webhook');
    await deleteWebhook(trx, id);
    await record(trx, webhookEvent('webhook.deleted', id, { before: settingsOf(current) }), context);
  });
}
