import { sql, type Kysely, type Migration } from 'kysely';

/**
 * A variant's `available` sums its active locations only (API.md section 21, "Sums"): it is
 * `stock` − `reserved` − `available_at_inactive_locations`, the units available at its inactive
 * locations, kept on the variant so that reading a variant costs the same with any number of
 * locations.
 *
 * - A level's change keeps it by a trigger on `stock_levels`: the level's `stock` − `reserved`
 *   moved by the difference, added to the variant when the level's location is inactive. Every
 *   writer of a level holds the variant's row lock already, so the trigger's update waits for
 *   nothing. The trigger, not the writers' own statements, reads the location's status because
 *   it reads it afresh (a volatile function's statement takes a new snapshot): a writer's
 *   statement that waited for the variant's lock while the location was being made inactive
 *   would still see it active in the snapshot it started with, and count the change wrongly.
 * - A location's change of status recounts the variants holding levels there (inventory/'s
 *   location-service.ts, under the location's lock and the variants' locks in id order).
 * The upgrade counts what inactive locations hold today.
 */
export const availableAtInactiveLocations: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`alter table variants add column available_at_inactive_locations integer not null default 0`.execute(db);
    await sql`
      update variants set available_at_inactive_locations = held.available
      from (
        select stock_levels.variant_id, sum(stock_levels.stock - stock_levels.reserved)::integer as available
        from stock_levels join locations on locations.id = stock_levels.location_id
        where locations.status = 'inactive'
        group by stock_levels.variant_id) as held
      where variants.id = held.variant_id`.execute(db);
    await sql`
      create function keep_available_at_inactive_locations() returns trigger language plpgsql as $$
      declare
        level_variant uuid;
        level_location uuid;
        change integer;
      begin
        if tg_op = 'DELETE' then
          level_variant := old.variant_id;
          level_location := old.location_id;
          change := -(old.stock - old.reserved);
        elsif tg_op = 'INSERT' then
          level_variant := new.variant_id;
          level_location := new.location_id;
          change := new.stock - new.reserved;
        else
          level_variant := new.variant_id;
          level_location := new.location_id;
          change := (new.stock - new.reserved) - (old.stock - old.reserved);
        end if;
        if change <> 0 and exists (select 1 from locations where id = level_location and status = 'inactive') then
          update variants set available_at_inactive_locations = available_at_inactive_locations + change where id = level_variant;
        end if;
        return null;
      end $$`.execute(db);
    await sql`
      create trigger stock_levels_keep_available_at_inactive_locations after insert or update of stock, reserved or delete on stock_levels
      for each row execute function keep_available_at_inactive_locations()`.execute(db);
  },
};
