import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Stock moves only by recorded movements: a variant's stock is the sum of its movements'
 * deltas. `reserved` counts the units held by active reservations; the checks make a negative
 * `available` (stock - reserved) impossible whatever the code does. Variants that already had
 * stock get an opening movement, so the sum holds from the start.
 */
export const stockMovements: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`alter table variants add column reserved integer not null default 0`.execute(db);
    await sql`alter table variants add constraint variants_reserved_within_stock check (reserved >= 0 and reserved <= stock)`.execute(db);
    await sql`
      create table stock_movements (
        id uuid primary key,
        variant_id uuid not null,
        delta integer not null,
        stock_after integer not null check (stock_after >= 0),
        reason text not null,
        reference text,
        actor_id uuid,
        created_at timestamptz not null
      )`.execute(db);
    await sql`create index stock_movements_by_variant on stock_movements (variant_id, created_at, id)`.execute(db);
    await sql`
      insert into stock_movements (id, variant_id, delta, stock_after, reason, reference, actor_id, created_at)
      select gen_random_uuid(), id, stock, stock, 'opening balance', null, null, created_at from variants where stock > 0`.execute(db);
  },
};
