import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Locations (API.md section 21): the places stock is kept. A code is unique in any letter case
 * (the index on `lower(code)`, which the service names `location_code_taken`), and at most one
 * row is the default (the partial unique index); the service keeps it exactly one by only ever
 * moving the mark from one row to another, and the default is always active (the check).
 * The upgrade creates the default location, `default`, with an id of its own
 * (gen_random_uuid()): later steps find it by `is_default`, never by a fixed id.
 */
export const locations: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      create table locations (
        id uuid primary key,
        code text not null check (code ~ '^[A-Za-z0-9_-]{1,32}$'),
        name text not null check (char_length(name) between 1 and 100),
        priority integer not null default 100 check (priority between 0 and 1000),
        status text not null default 'active' check (status in ('active', 'inactive')),
        is_default boolean not null default false,
        version integer not null default 1,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        constraint locations_default_is_active check (not is_default or status = 'active')
      )`.execute(db);
    await sql`create unique index locations_code_unique on locations (lower(code))`.execute(db);
    await sql`create unique index locations_one_default on locations (is_default) where is_default`.execute(db);
    await sql`create index locations_by_priority on locations (priority, lower(code))`.execute(db);
    await sql`insert into locations (id, code, name, is_default) values (gen_random_uuid(), 'default', 'Default', true)`.execute(db);
  },
};
