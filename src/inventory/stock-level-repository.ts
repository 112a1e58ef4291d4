import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, LocationRow, StockLevelRow } from '../db/tables.js';

/**
 * A variant's stock and reserved units per location (`stock_levels`), which inventory alone
 * writes. Every writer of a variant's levels holds the variant's row lock first (a stock change
 * locks it, a hold's statement locks it before the level), so a level read under that lock is
 * the one the next write sees, and levels need no lock of their own.
 */

/** The id of the default location (there is always exactly one). */
export async function defaultLocationId(db: Kysely<Database>): Promise<string> {
  const row = await db.selectFrom('locations').select('id').where('is_default', '=', true).executeTakeFirstOrThrow();
  return row.id;
}

/**
 * Locations by id, key-share-locked in id order: none can be deleted (its deletion locks it FOR
 * UPDATE, then checks it is empty) until the stock change there commits. A key share does not
 * conflict with the plain update that moves the default mark away from a location, so a change
 * of the default and stock changes never wait on each other in a circle.
 */
export function shareLocations(trx: Transaction<Database>, ids: string[]): Promise<LocationRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return trx.selectFrom('locations').selectAll().where('id', 'in', ids).orderBy('id').forKeyShare().execute();
}

/** Locations by id, unlocked (what reservation lines name). */
export function locationsByIds(db: Kysely<Database>, ids: string[]): Promise<LocationRow[]> {
  return db.selectFrom('locations').selectAll().where('id', 'in', ids).execute();
}

/** The levels of some variants (rows that exist; a missing one is zero of both). */
export function levelsOfVariants(db: Kysely<Database>, variantIds: string[]): Promise<StockLevelRow[]> {
  if (variantIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('stock_levels').selectAll().where('variant_id', 'in', variantIds).orderBy('variant_id').orderBy('location_id').execute();
}

/** Sets a variant's stock at a location (the row made if missing); reserved stays. */
export async function writeLevelStock(db: Kysely<Database>, variantId: string, locationId: string, stock: number): Promise<StockLevelRow> {
  return db
    .insertInto('stock_levels')
    .values({ variant_id: variantId, location_id: locationId, stock })
    .onConflict((conflict) => conflict.columns(['variant_id', 'location_id']).doUpdateSet({ stock }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Moves units reserved between levels (a reallocation), one statement for every move: each
 * level's `reserved` changes by its `delta`. The caller holds the variants' locks and checked
 * every level's room; the check `reserved <= stock` refuses anything else. The number of levels
 * written, one per move (a destination with units available has its row).
 */
export async function moveReserved(trx: Transaction<Database>, moves: { variant_id: string; location_id: string; delta: number }[]): Promise<number> {
  if (moves.length === 0) return 0;
  const result = await sql`
    update stock_levels set reserved = stock_levels.reserved + moved.delta
    from unnest(${moves.map((move) => move.variant_id)}::uuid[], ${moves.map((move) => move.location_id)}::uuid[], ${moves.map((move) => move.delta)}::integer[])
      as moved (variant_id, location_id, delta)
    where stock_levels.variant_id = moved.variant_id and stock_levels.location_id = moved.location_id`.execute(trx);
  return Number(result.numAffectedRows ?? 0);
}

/** The opening stock of new variants, each at its location, one statement for them all (an import's batch). */
export async function insertLevels(db: Kysely<Database>, levels: { variant_id: string; location_id: string; stock: number }[]): Promise<void> {
  if (levels.length === 0) return;
  await sql`
    insert into stock_levels (variant_id, location_id, stock)
    select variant_id, location_id, stock
    from unnest(${levels.map((level) => level.variant_id)}::uuid[], ${levels.map((level) => level.location_id)}::uuid[], ${levels.map((level) => level.stock)}::integer[])
      as opened (variant_id, location_id, stock)`.execute(db);
}

/** A variant's level at every location, by priority then code, zeros included (GET /api/variants/{id}/stock). */
export function levelsAtEveryLocation(db: Kysely<Database>, variantId: string) {
  return db
    .selectFrom('locations')
    .leftJoin('stock_levels', (join) => join.onRef('stock_levels.location_id', '=', 'locations.id').on('stock_levels.variant_id', '=', variantId))
    .select([
      'locations.id as location_id',
      'locations.code',
      'locations.status',
      sql<number>`coalesce(stock_levels.stock, 0)`.as('stock'),
      sql<number>`coalesce(stock_levels.reserved, 0)`.as('reserved'),
    ])
    .orderBy('locations.priority')
    .orderBy(sql`lower(locations.code)`)
    .orderBy('locations.code')
    .execute();
}

/** Whether any variant has stock or reserved units at a location (a location's deletion). */
export async function locationHoldsStock(db: Kysely<Database>, locationId: string): Promise<boolean> {
  const row = await db
    .selectFrom('stock_levels')
    .select('variant_id')
    .where('location_id', '=', locationId)
    .where((eb) => eb.or([eb('stock', '>', 0), eb('reserved', '>', 0)]))
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
