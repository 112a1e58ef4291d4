import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Variant imports (API.md section 14):
 * - `import_uploads`: an upload's bytes in pieces of about a megabyte, written as they arrive
 *   (never held whole in memory) and read back a piece at a time; dropped when the import ends.
 * - `variant_imports`: one row per import, also a row of the work queue (jobs/work-queue.ts):
 *   any instance claims it under a lease it renews while it runs; `rows_processed` is the
 *   checkpoint a resumed import starts from.
 * - `variant_import_errors`: the failed rows, as the file had them, for the error report.
 */
export const imports: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      create table import_uploads (
        upload_id uuid not null,
        position integer not null,
        data bytea not null,
        created_at timestamptz not null,
        primary key (upload_id, position)
      )`.execute(db);
    await sql`create index import_uploads_by_age on import_uploads (created_at)`.execute(db);
    await sql`
      create table variant_imports (
        id uuid primary key,
        upload_id uuid not null,
        status text not null check (status in ('pending', 'running', 'succeeded', 'failed', 'cancelled')),
        format text not null check (format in ('csv', 'jsonl')),
        mode text not null check (mode in ('upsert', 'create')),
        on_error text not null check (on_error in ('reject_all', 'skip_failed')),
        dry_run boolean not null,
        byte_size bigint not null,
        rows_total integer,
        rows_processed integer not null default 0,
        created integer not null default 0,
        updated integer not null default 0,
        unchanged integer not null default 0,
        failed integer not null default 0,
        first_errors jsonb not null default '[]',
        created_by uuid not null,
        actor_type text not null check (actor_type in ('user', 'client')),
        created_at timestamptz not null,
        started_at timestamptz,
        finished_at timestamptz,
        attempts integer not null default 0,
        next_attempt_at timestamptz not null,
        claimed_until timestamptz,
        claim_token uuid,
        last_error text
      )`.execute(db);
    await sql`create index variant_imports_by_creation on variant_imports (created_at, id)`.execute(db);
    await sql`create index variant_imports_due on variant_imports (next_attempt_at) where status in ('pending', 'running')`.execute(db);
    await sql`
      create table variant_import_errors (
        import_id uuid not null references variant_imports (id) on delete cascade,
        line integer not null,
        error text not null,
        fields jsonb not null,
        primary key (import_id, line)
      )`.execute(db);
  },
};
