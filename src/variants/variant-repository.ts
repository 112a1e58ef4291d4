import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { containsPattern, countRows, keysetPage, type PageRequest } from '../db/list-queries.js';
import { preparedQuery } from '../db/prepared-query.js';
import type { Database, VariantRow } from '../db/tables.js';

export interface VariantFields {
  product_id: string;
  sku: string;
  name: string;
  price: number;
  stock: number;
  attributes: Record<string, string>;
}

const variantById = preparedQuery((db, id) => db.selectFrom('variants').selectAll().where('id', '=', id));

export async function findVariantById(db: Kysely<Database>, id: string): Promise<VariantRow | undefined> {
  return (await variantById(db, id))[0];
}

export function findVariantByIdForUpdate(db: Kysely<Database>, id: string): Promise<VariantRow | undefined> {
  return db.selectFrom('variants').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

const variantBySku = preparedQuery((db, lowerCaseSku) => db.selectFrom('variants').selectAll().where(sql<string>`lower(sku)`, '=', lowerCaseSku));

/** Uses the unique index on lower(sku). */
export async function findVariantBySku(db: Kysely<Database>, sku: string): Promise<VariantRow | undefined> {
  return (await variantBySku(db, sku.toLowerCase()))[0];
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
  return keysetPage(db.selectFrom('variants').selectAll().where('product_id', '=', productId), page, 'oldest-first').execute();
}

export function countVariantsOfProduct(db: Kysely<Database>, productId: string): Promise<number> {
  return countRows(db.selectFrom('variants').where('product_id', '=', productId));
}

export interface VariantFilter {
  q?: string | undefined;
  product_id?: string | undefined;
  in_stock?: boolean | undefined;
}

function filteredVariants(db: Kysely<Database>, filter: VariantFilter) {
  let query = db.selectFrom('variants');
  if (filter.product_id) query = query.where('product_id', '=', filter.product_id);
  if (filter.in_stock !== undefined) query = query.where(sql<number>`stock - reserved`, filter.in_stock ? '>' : '<=', 0);
  if (filter.q) {
    const pattern = containsPattern(filter.q);
    query = query.where((eb) => eb.or([eb('sku', 'ilike', pattern), eb('name', 'ilike', pattern)]));
  }
  return query;
}

/** Newest first; `q` is served by trigram indexes where PostgreSQL has pg_trgm. */
export function listVariants(db: Kysely<Database>, filter: VariantFilter, page: PageRequest): Promise<VariantRow[]> {
  return keysetPage(filteredVariants(db, filter).selectAll(), page, 'newest-first').execute();
}

export function countVariants(db: Kysely<Database>, filter: VariantFilter): Promise<number> {
  return countRows(filteredVariants(db, filter));
}
