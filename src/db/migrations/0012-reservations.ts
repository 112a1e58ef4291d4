import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Reservations hold units of variants for a while. A variant's `reserved` is a counter kept in
 * the transactions that open and close reservations; the deferred constraint trigger checks at
 * every commit that it equals the quantities of the variant's active reservation lines, so a
 * slip in the code fails the transaction instead of leaving a wrong `available` behind. Lines
 * carry `active` so that sum reads only open lines (partial index), however long the history.
 * Lines have no foreign key to variants: a variant with closed reservations may be deleted.
 */
export const reservations: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      create table reservations (
        id uuid primary key,
        status text not null check (status in ('active', 'committed', 'released', 'expired')),
        reference text,
        expires_at timestamptz not null,
        created_by uuid,
        created_at timestamptz not null,
        updated_at timestamptz not null
      )`.execute(db);
    await sql`create index reservations_due on reservations (expires_at) where status = 'active'`.execute(db);
    await sql`
      create table reservation_lines (
        reservation_id uuid not null references reservations (id) on delete cascade,
        position integer not null,
        variant_id uuid not null,
        quantity integer not null check (quantity > 0),
        active boolean not null default true,
        primary key (reservation_id, position)
      )`.execute(db);
    await sql`create index reservation_lines_active_by_variant on reservation_lines (variant_id) where active`.execute(db);
    await sql`
      create function check_variant_reserved() returns trigger language plpgsql as $$
      declare
        checked_id uuid;
        counter integer;
        held bigint;
      begin
        if tg_table_name = 'variants' then
          checked_id := new.id;
        else
          checked_id := new.variant_id;
        end if;
        select reserved into counter from variants where id = checked_id;
        if not found then
          return null;
        end if;
        select coalesce(sum(quantity), 0) into held from reservation_lines where variant_id = checked_id and active;
        if held <> counter then
          raise exception 'variant % counts % reserved units but its active reservations hold %', checked_id, counter, held
            using errcode = '23514';
        end if;
        return null;
      end $$`.execute(db);
    await sql`
      create constraint trigger variants_reserved_equals_active_lines
      after update of reserved on variants deferrable initially deferred
      for each row when (old.reserved is distinct from new.reserved)
      execute function check_variant_reserved()`.execute(db);
    await sql`
      create constraint trigger reservation_lines_counted_by_variant
      after insert or update of active on reservation_lines deferrable initially deferred
      for each row execute function check_variant_reserved()`.execute(db);
  },
};
