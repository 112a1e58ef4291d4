import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { countRows, keysetPage, type PageRequest } from '../db/list-queries.js';
import type { Database, StockMovementRow } from '../db/tables.js';

export type NewMovement = Omit<StockMovementRow, 'id' | 'created_at'>;

/** Every change of a variant's stock writes one, in the same transaction. */
export async function insertStockMovement(db: Kysely<Database>, movement: NewMovement): Promise<void> {
  await db.insertInto('stock_movements').values({ id: randomUUID(), created_at: new Date(), ...movement }).execute();
}

/** Many movements in one statement (an import's batch), a column an array. */
export async function insertStockMovements(db: Kysely<Database>, movements: NewMovement[]): Promise<void> {
  if (movements.length === 0) return;
  const column = <Key extends keyof NewMovement>(key: Key) => movements.map((movement) => movement[key]);
  await sql`
    insert into stock_movements (id, variant_id, location_id, delta, stock_after, reason, reference, actor_id, created_at)
    select gen_random_uuid(), variant_id, location_id, delta, stock_after, reason, reference, actor_id, ${new Date()}
    from unnest(${column('variant_id')}::uuid[], ${column('location_id')}::uuid[], ${column('delta')}::integer[], ${column('stock_after')}::integer[], ${column('reason')}::text[],
                ${column('reference')}::text[], ${column('actor_id')}::uuid[]) as moved (variant_id, location_id, delta, stock_after, reason, reference, actor_id)`.execute(db);
}

/** A variant's movements, newest first, a page at a time. */
export function stockMovementsPage(db: Kysely<Database>, variantId: string, page: PageRequest) {
  return keysetPage(db.selectFrom('stock_movements').selectAll().where('variant_id', '=', variantId), page, 'newest-first');
}

export function countStockMovements(db: Kysely<Database>, variantId: string): Promise<number> {
  return countRows(db.selectFrom('stock_movements').where('variant_id', '=', variantId));
}
