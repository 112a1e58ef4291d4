import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/tables.js';

/** What the reconciliation compares at a level, beside the variant's `reserved` (reservation-repository.ts). */
export type LevelCheck = 'reserved' | 'stock' | 'available_at_inactive_locations';

export interface LevelMismatch {
  figure: LevelCheck;
  variant_id: string;
  /** The location checked; null for the variant's kept `available_at_inactive_locations`. */
  location_id: string | null;
  /** What the row says: the level's `reserved` or `stock`, or the variant's kept figure (0 where there is no row). */
  counted: number;
  /** What it should be: the open allocations there, the sum of the movements there, or what the inactive levels have available. */
  expected: number;
}

/**
 * The figures per location that differ from what they are made of, read in one statement (one
 * snapshot, so a write in flight is wholly in it or wholly out): each level's `reserved` against
 * the open allocations there, each level's `stock` against the sum of the variant's movements
 * there (a deleted variant's closing movements bring it to 0, with no level left), and each
 * variant's `available_at_inactive_locations` against its inactive levels. Read only: a stock that
 * differs from its movements cannot be told right from wrong by a counter, so it is for the
 * operator. The movements' sum reads every movement; a pass is once a minute on one instance.
 */
export async function levelMismatches(db: Kysely<Database>, limit: number): Promise<LevelMismatch[]> {
  const { rows } = await sql<LevelMismatch>`
    with held as (
      select lines.variant_id, allocations.location_id, sum(allocations.quantity)::integer as quantity
      from reservation_lines as lines
      join reservation_allocations as allocations on allocations.reservation_id = lines.reservation_id and allocations.position = lines.position
      where lines.active
      group by lines.variant_id, allocations.location_id),
    moved as (
      select variant_id, location_id, sum(delta)::integer as stock from stock_movements group by variant_id, location_id),
    inactive as (
      select stock_levels.variant_id, sum(stock_levels.stock - stock_levels.reserved)::integer as available
      from stock_levels join locations on locations.id = stock_levels.location_id
      where locations.status = 'inactive'
      group by stock_levels.variant_id)
    select * from (
      select 'reserved' as figure, coalesce(levels.variant_id, held.variant_id) as variant_id, coalesce(levels.location_id, held.location_id) as location_id,
        coalesce(levels.reserved, 0) as counted, coalesce(held.quantity, 0) as expected
      from (select variant_id, location_id, reserved from stock_levels where reserved <> 0) as levels
      full join held on held.variant_id = levels.variant_id and held.location_id = levels.location_id
      where coalesce(levels.reserved, 0) <> coalesce(held.quantity, 0)
      union all
      select 'stock', coalesce(levels.variant_id, moved.variant_id), coalesce(levels.location_id, moved.location_id),
        coalesce(levels.stock, 0), coalesce(moved.stock, 0)
      from stock_levels as levels
      full join moved on moved.variant_id = levels.variant_id and moved.location_id = levels.location_id
      where coalesce(levels.stock, 0) <> coalesce(moved.stock, 0)
      union all
      select 'available_at_inactive_locations', variants.id, null, variants.available_at_inactive_locations, coalesce(inactive.available, 0)
      from variants left join inactive on inactive.variant_id = variants.id
      where variants.available_at_inactive_locations <> coalesce(inactive.available, 0)
    ) as found
    order by variant_id, figure, location_id
    limit ${limit}`.execute(db);
  return rows;
}
