import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { Database, VariantRow } from '../db/tables.js';
import type { PageRequest } from '../http/pagination.js';
import { afterCursor } from '../db/keyset.js';

export interface VariantFields {
  product_id: string;
  sku: string;
  name: string;
  price: number;
  stock: number;
  attributes: Record<string, string>;
}

export function findVariantById(db: Kysely<Database>, id: string): Promise<VariantRow | undefined> {
  return db.selectFrom('variants').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findVariantByIdForUpdate(db: Kysely<Database>, id: string): Promise<VariantRow | undefined> {
  return db.selectFrom('variants').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/** Uses the unique index on lower(sku). */
export function findVariantBySku(db: Kysely<Database>, sku: string): Promise<VariantRow | undefined> {
  return db
    .selectFrom('variants')
    .selectAll()
    .where(sql<string>`lower(sku)`, '=', sku.toLowerCase())
    .executeTakeFirst();
}

export function insertVariant(db: Kysely<Database>, id: string, fields: VariantFields): Promise<VariantRow> {
  const now = new Date();
  return db
    .insertInto('variants')
    .values({ id, ...fields, attributes: JSON.stringify(fields.attributes), created_at: now, updated_at: now })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function replaceVariant(db: Kysely<Database>, id: string, fields: VariantFields): Promise<VariantRow> {
  return db
    .updateTable('variants')
    .set({ ...fields, attributes: JSON.stringify(fields.attributes), version: sql`version + 1`, updated_at: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteVariant(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('variants').where('id', '=', id).execute();
}

/** Oldest first, keyset on (created_at, id), served by the (product_id, created_at, id) index. */
export function listVariantsOfProduct(db: Kysely<Database>, productId: string, page: PageRequest): Promise<VariantRow[]> {
  let query = db.selectFrom('variants').selectAll().where('product_id', '=', productId);
  if (page.after) {
    const after = page.after;
    query = query.where((eb) => afterCursor(eb, after, 'newer'));
  }
  return query.orderBy('created_at', 'asc').orderBy('id', 'asc').limit(page.limit + 1).execute();
}

export async function countVariantsOfProduct(db: Kysely<Database>, productId: string): Promise<number> {
  const row = await db
    .selectFrom('variants')
    .select((eb) => eb.fn.countAll<number>().as('total'))
    .where('product_id', '=', productId)
    .executeTakeFirstOrThrow();
  return Number(row.total);
}
