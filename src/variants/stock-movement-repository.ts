import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { countRows, keysetPage, type PageRequest } from '../db/list-queries.js';
import type { Database, StockMovementRow } from '../db/tables.js';

export type NewMovement = Omit<StockMovementRow, 'id' | 'created_at'>;

/** Every change of a variant's stock writes one, in the same transaction. */
export async function insertStockMovement(db: Kysely<Database>, movement: NewMovement): Promise<StockMovementRow> {
  return db.insertInto('stock_movements').values({ id: randomUUID(), created_at: new Date(), ...movement }).returningAll().executeTakeFirstOrThrow();
}

export function listStockMovements(db: Kysely<Database>, variantId: string, page: PageRequest): Promise<StockMovementRow[]> {
  return keysetPage(db.selectFrom('stock_movements').selectAll().where('variant_id', '=', variantId), page, 'newest-first').execute();
}

export function countStockMovements(db: Kysely<Database>, variantId: string): Promise<number> {
  return countRows(db.selectFrom('stock_movements').where('variant_id', '=', variantId));
}
