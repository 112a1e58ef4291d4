import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Whether a location is active, read afresh (API.md section 21: a reservation is held at an
 * active location only). A hold's statement chooses and checks its location, then waits for the
 * variant's row lock; a location being made inactive holds that lock (location-service.ts
 * recounts its variants under it). In READ COMMITTED the waiting statement would go on with the
 * snapshot it started with, where the location is still active, and hold units at a location
 * that is inactive by then. A volatile PL/pgSQL function's query takes a new snapshot, so the
 * hold's check, made on the level's row after the variant's lock is taken, sees the committed
 * status. (The trigger of 0036 reads the status afresh for the same reason.)
 */
export const locationStatusAfresh: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      create function location_is_active(location uuid) returns boolean language plpgsql volatile as $$
      begin
        return exists (select 1 from locations where id = location and status = 'active');
      end $$`.execute(db);
  },
};
