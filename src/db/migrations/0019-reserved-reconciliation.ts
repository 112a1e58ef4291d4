import { sql, type Kysely, type Migration } from 'kysely';

/**
 * The deferred trigger of 0012 summed every open line of a variant under the row's lock at each
 * commit, so a reservation cost more the more carts held the variant (5 ms with none open, 8 ms
 * with 20,000, and growing). `reserved` is now kept by the reservation code alone, each write
 * one conditional update under the row's lock, and proved equal to the open lines by the
 * reconciliation job (src/inventory/reconciliation-service.ts), which reports and repairs any
 * difference. `variants_reserved_within_stock` (0011) still refuses an oversold row at O(1).
 */
export const reservedReconciliation: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`drop trigger variants_reserved_equals_active_lines on variants`.execute(db);
    await sql`drop trigger reservation_lines_counted_by_variant on reservation_lines`.execute(db);
    await sql`drop function check_variant_reserved()`.execute(db);
  },
};
