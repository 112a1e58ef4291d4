import type { Kysely, Transaction } from 'kysely';
import { sql } from 'kysely';
import { containsPattern, countRows, keysetPage, type PageRequest } from '../db/list-queries.js';
import type { Database, VariantRow } from '../db/tables.js';
import { callerRead } from '../sessions/caller-query.js';

/** The fields of a variant a client sets; `stock` is inventory's (inventory/stock-service.ts). */
export interface VariantFields {
  product_id: string;
  sku: string;
  name: string;
  price: number;
  attributes: Record<string, string>;
}

/** A variant by id, beside the caller: the hottest read of the service (queries/variants.sql). */
export const variantById = callerRead<VariantRow, [string]>('variants.byId', (db, id) => db.selectFrom('variants').selectAll().where('id', '=', id));

/** A variant by SKU in any case, beside the caller; uses the unique index on lower(sku). */
export const variantBySku = callerRead<VariantRow, [string]>('variants.bySku', (db, lowerCaseSku) => db.selectFrom('variants').selectAll().where(sql<string>`lower(sku)`, '=', lowerCaseSku));

export function findVariantById(db: Kysely<Database>, id: string): Promise<VariantRow | undefined> {
  return db.selectFrom('variants').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findVariantByIdForUpdate(trx: Transaction<Database>, id: string): Promise<VariantRow | undefined> {
  return trx.selectFrom('variants').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/** A new variant, with no stock yet (the column's default, 0): inventory opens it (openStock). */
export function insertVariant(trx: Transaction<Database>, id: string, fields: VariantFields): Promise<VariantRow> {
  const now = new Date();
  return trx
    .insertInto('variants')
    .values({ id, ...fields, attributes: JSON.stringify(fields.attributes), created_at: now, updated_at: now })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Replaces the variant's own fields; the version moves on. */
export function replaceVariantFields(trx: Transaction<Database>, id: string, fields: VariantFields): Promise<VariantRow> {
  return trx
    .updateTable('variants')
    .set({ ...fields, attributes: JSON.stringify(fields.attributes), version: sql`version + 1`, updated_at: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The variants with these SKUs (lower-cased), locked for an import's batch. */
export function lockVariantsBySku(trx: Transaction<Database>, lowerCaseSkus: string[]): Promise<VariantRow[]> {
  if (lowerCaseSkus.length === 0) return Promise.resolve([]);
  return trx.selectFrom('variants').selectAll().where(sql<boolean>`lower(sku) = any(${lowerCaseSkus}::text[])`).orderBy('id').forUpdate().execute();
}

/** The ids of these variants that exist (an import's create with a chosen id). */
export async function existingVariantIds(trx: Transaction<Database>, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await trx.selectFrom('variants').select('id').where(sql<boolean>`id = any(${ids}::uuid[])`).execute();
  return new Set(rows.map((row) => row.id));
}

/**
 * For each (product, attributes) asked, by its position in `wanted`, the id of the variant that
 * has them: the rule of variants_attributes_unique, asked of a whole batch in one statement.
 */
export async function variantsWithAttributes(trx: Transaction<Database>, wanted: { productId: string; attributes: Record<string, string> }[]): Promise<Map<number, string>> {
  if (wanted.length === 0) return new Map();
  // One probe of variants_attributes_unique per row asked: `limit 1` keeps the planner from turning it
  // into a hash join, which would hash every variant's attributes for each batch.
  const rows = await sql<{ id: string; position: string }>`
    select holder.id, asked.position
    from unnest(${wanted.map((item) => item.productId)}::text[], ${wanted.map((item) => JSON.stringify(item.attributes))}::jsonb[]) with ordinality as asked (product_id, attributes, position)
    cross join lateral (
      select variants.id from variants
      where variants.product_id = asked.product_id and md5(variants.attributes::text) = md5(asked.attributes::text)
      limit 1
    ) as holder`.execute(trx);
  return new Map(rows.rows.map((row) => [Number(row.position) - 1, row.id]));
}

export async function deleteVariant(trx: Transaction<Database>, id: string): Promise<void> {
  await trx.deleteFrom('variants').where('id', '=', id).execute();
}

/** A product's variants, oldest first, keyset on (created_at, id) by the (product_id, created_at, id) index. */
export function variantsOfProductPage(db: Kysely<Database>, productId: string, page: PageRequest) {
  return keysetPage(db.selectFrom('variants').selectAll().where('product_id', '=', productId), page, 'oldest-first');
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
  if (filter.in_stock !== undefined) query = query.where(sql<number>`stock - reserved - available_at_inactive_locations`, filter.in_stock ? '>' : '<=', 0);
  if (filter.q) {
    const pattern = containsPattern(filter.q);
    query = query.where((eb) => eb.or([eb('sku', 'ilike', pattern), eb('name', 'ilike', pattern)]));
  }
  return query;
}

/** Newest first; `q` is served by trigram indexes where PostgreSQL has pg_trgm. */
export function variantsPage(db: Kysely<Database>, filter: VariantFilter, page: PageRequest) {
  return keysetPage(filteredVariants(db, filter).selectAll(), page, 'newest-first');
}

/** Oldest first, a page at a time: an export (the same filters as the list). */
export function variantsOldestFirstPage(db: Kysely<Database>, filter: VariantFilter, page: PageRequest): Promise<VariantRow[]> {
  return keysetPage(filteredVariants(db, filter).selectAll(), page, 'oldest-first').execute();
}

/** Every attribute key the filtered variants use, sorted: an export's CSV columns. */
export async function attributeKeysOf(db: Kysely<Database>, filter: VariantFilter): Promise<string[]> {
  const rows = await filteredVariants(db, filter)
    .select(sql<string>`jsonb_object_keys(attributes)`.as('key'))
    .distinct()
    .execute();
  return rows.map((row) => row.key).sort();
}

export function countVariants(db: Kysely<Database>, filter: VariantFilter): Promise<number> {
  return countRows(filteredVariants(db, filter));
}
