import { sql, type Kysely } from 'kysely';
import { keysetPage, type PageRequest } from '../db/list-queries.js';
import type { Database, DeliveryRow, WebhookRow } from '../db/tables.js';

export function findWebhookById(db: Kysely<Database>, id: string): Promise<WebhookRow | undefined> {
  return db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
}

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

export function listWebhooks(db: Kysely<Database>, page: PageRequest): Promise<WebhookRow[]> {
  return keysetPage(db.selectFrom('webhooks').selectAll(), page, 'newest-first').execute();
}

export type DeliveryWithType = DeliveryRow & { event_type: string };

export function listDeliveries(db: Kysely<Database>, webhookId: string, page: PageRequest): Promise<DeliveryWithType[]> {
  const query = db
    .selectFrom('webhook_deliveries')
    .innerJoin('events', 'events.id', 'webhook_deliveries.event_id')
    .selectAll('webhook_deliveries')
    .select('events.type as event_type')
    .where('webhook_deliveries.webhook_id', '=', webhookId);
  return keysetPage(query, page, 'newest-first', 'webhook_deliveries').execute();
}
