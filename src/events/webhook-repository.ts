import { sql, type Kysely, type Transaction } from 'kysely';
import { countRows, keysetPage, type PageRequest } from '../db/list-queries.js';
import { callerRead } from '../sessions/caller-query.js';
import type { Database, DeliveryRow, WebhookRow } from '../db/tables.js';
import { settledColumns, type Outcome, type Settlement } from '../jobs/work-queue.js';

/** A webhook by id, beside the caller. */
export const webhookById = callerRead<WebhookRow, [string]>('webhooks.byId', (db, id) => db.selectFrom('webhooks').selectAll().where('id', '=', id));

export function findWebhookByIdForUpdate(db: Kysely<Database>, id: string): Promise<WebhookRow | undefined> {
  return db.selectFrom('webhooks').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

export function insertWebhook(db: Kysely<Database>, webhook: Omit<WebhookRow, 'version' | 'failing_since'>): Promise<WebhookRow> {
  return db.insertInto('webhooks').values(webhook).returningAll().executeTakeFirstOrThrow();
}

export function updateWebhook(
  db: Kysely<Database>,
  id: string,
  change: Partial<Pick<WebhookRow, 'url' | 'events' | 'description' | 'enabled' | 'failing_since'>>,
): Promise<WebhookRow> {
  return db
    .updateTable('webhooks')
    .set({ ...change, version: sql`version + 1`, updated_at: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteWebhook(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('webhooks').where('id', '=', id).execute();
}

export function webhooksPage(db: Kysely<Database>, page: PageRequest) {
  return keysetPage(db.selectFrom('webhooks').selectAll(), page, 'newest-first');
}

export function countWebhooks(db: Kysely<Database>): Promise<number> {
  return countRows(db.selectFrom('webhooks'));
}

export function countDeliveries(db: Kysely<Database>, webhookId: string): Promise<number> {
  return countRows(db.selectFrom('webhook_deliveries').where('webhook_id', '=', webhookId));
}

export type DeliveryWithType = DeliveryRow & { event_type: string };

const deliveriesWithType = (db: Kysely<Database>, webhookId: string) =>
  db
    .selectFrom('webhook_deliveries')
    .innerJoin('events', 'events.id', 'webhook_deliveries.event_id')
    .selectAll('webhook_deliveries')
    .select('events.type as event_type')
    .where('webhook_deliveries.webhook_id', '=', webhookId);

export function deliveriesPage(db: Kysely<Database>, webhookId: string, page: PageRequest) {
  return keysetPage(deliveriesWithType(db, webhookId), page, 'newest-first', 'webhook_deliveries');
}

export function findDelivery(db: Kysely<Database>, webhookId: string, deliveryId: string): Promise<DeliveryWithType | undefined> {
  return deliveriesWithType(db, webhookId).where('webhook_deliveries.id', '=', deliveryId).executeTakeFirst();
}

/** A delivery of the webhook, locked: a retry must not race the attempt that may be claiming it. */
export function lockDelivery(db: Kysely<Database>, webhookId: string, deliveryId: string): Promise<DeliveryRow | undefined> {
  return db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId).where('id', '=', deliveryId).forUpdate().executeTakeFirst();
}

/**
 * Due again now, its attempts counting on; left as it is while an attempt holds it (its claim
 * not yet lapsed), which then counts as the retry.
 */
export async function requeueDelivery(db: Kysely<Database>, id: string): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', next_attempt_at: sql<Date>`now()` })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<=', sql<Date>`now()`)]))
    .execute();
}

/** What an attempt of a delivery keeps: the status code it got (null without an answer), and when it was delivered. */
export interface DeliveryAttemptColumns {
  last_status_code: number | null;
  delivered_at?: Date;
}

const DELIVERY_STATUS = { done: 'succeeded', retry: 'pending', failed: 'failed' } as const satisfies Record<Outcome, DeliveryRow['status']>;

/** A delivery attempt's result, under the claim it was made with (the delivery queue's settle). */
export async function settleDelivery(trx: Transaction<Database>, delivery: DeliveryRow, settlement: Settlement<DeliveryAttemptColumns>): Promise<boolean> {
  const settled = await trx
    .updateTable('webhook_deliveries')
    .set({ ...settledColumns(settlement), status: DELIVERY_STATUS[settlement.outcome], ...settlement.columns })
    .where('id', '=', delivery.id)
    .where('claim_token', '=', delivery.claim_token)
    .returning('id')
    .executeTakeFirst();
  return settled !== undefined;
}
