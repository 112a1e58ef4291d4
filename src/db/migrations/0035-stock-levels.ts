import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Stock per location (API.md section 21).
 *
 * - `stock_levels` holds a variant's `stock` and `reserved` at one location; a missing row is
 *   zero of both. The checks hold the bounds and `reserved <= stock` per location as 0011's do for
 *   the variant. `variants.stock` and `variants.reserved` stay, kept equal to the sums over the
 *   levels by every statement that writes a level (inventory/), so reading a variant costs the
 *   same with any number of locations.
 * - A movement names its location; its `stock_after` is the stock there.
 * - `reservation_allocations` says where each reservation line holds its units (a line may later
 *   be split over several locations), so commit, release and expiry act on the right level.
 * - The upgrade puts every variant's stock and reserved, every movement and every reservation
 *   line at the default location 0028 made: nothing changes for a shop with one location.
 * A level's location may be deleted only while it holds nothing (the service checks); its
 * zero rows go with it. A level goes with its variant.
 */
export const stockLevels: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      create table stock_levels (
        variant_id uuid not null references variants (id) on delete cascade,
        location_id uuid not null references locations (id) on delete cascade,
        stock integer not null default 0 check (stock between 0 and 1000000000),
        reserved integer not null default 0,
        constraint stock_levels_reserved_within_stock check (reserved >= 0 and reserved <= stock),
        primary key (variant_id, location_id)
      )`.execute(db);
    await sql`create index stock_levels_holding_at_location on stock_levels (location_id) where stock > 0 or reserved > 0`.execute(db);
    await sql`
      insert into stock_levels (variant_id, location_id, stock, reserved)
      select variants.id, locations.id, variants.stock, variants.reserved from variants cross join locations where locations.is_default`.execute(db);

    await sql`alter table stock_movements add column location_id uuid`.execute(db);
    await sql`update stock_movements set location_id = (select id from locations where is_default)`.execute(db);
    await sql`alter table stock_movements alter column location_id set not null`.execute(db);

    await sql`
      create table reservation_allocations (
        reservation_id uuid not null references reservations (id) on delete cascade,
        position integer not null,
        location_id uuid not null,
        quantity integer not null check (quantity > 0),
        primary key (reservation_id, position, location_id)
      )`.execute(db);
    await sql`
      insert into reservation_allocations (reservation_id, position, location_id, quantity)
      select reservation_lines.reservation_id, reservation_lines.position, locations.id, reservation_lines.quantity
      from reservation_lines cross join locations where locations.is_default`.execute(db);
  },
};
