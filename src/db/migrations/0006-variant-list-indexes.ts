import { sql, type Kysely, type Migration } from 'kysely';

/**
 * GET /api/variants pages newest first over (created_at, id), and `q` is a case-insensitive
 * substring of SKU or name: a btree for the pages, trigram GIN indexes for the search where
 * pg_trgm exists (as for the users search in 0004).
 */
export const variantListIndexes: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`create index variants_by_creation on variants (created_at, id)`.execute(db);
    const available = await sql<{ name: string }>`select name from pg_available_extensions where name = 'pg_trgm'`.execute(db);
    if (available.rows.length === 0) return;
    await sql`create extension if not exists pg_trgm`.execute(db);
    await sql`create index variants_sku_trigram on variants using gin (sku gin_trgm_ops)`.execute(db);
    await sql`create index variants_name_trigram on variants using gin (name gin_trgm_ops)`.execute(db);
  },
};
