import { sql, type Kysely, type Migration } from 'kysely';

/**
 * `q` on GET /api/users is a case-insensitive substring of email or name (ILIKE '%q%'), which
 * no btree can serve; trigram GIN indexes can, so a search stays fast at a million users.
 * pg_trgm is a trusted extension (PostgreSQL 13+), so a database owner may create it. The
 * embedded PGlite build has no pg_trgm; there the indexes are skipped and a search scans,
 * which is fine for the one-machine data sets PGlite is for.
 */
export const userSearchTrigramIndexes: Migration = {
  async up(db: Kysely<unknown>) {
    const available = await sql<{ name: string }>`select name from pg_available_extensions where name = 'pg_trgm'`.execute(db);
    if (available.rows.length === 0) return;
    await sql`create extension if not exists pg_trgm`.execute(db);
    await sql`create index users_email_trigram on users using gin (email gin_trgm_ops) where deleted_at is null`.execute(db);
    await sql`create index users_name_trigram on users using gin (name gin_trgm_ops) where deleted_at is null`.execute(db);
  },
};
