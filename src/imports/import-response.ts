import type { VariantImportRow } from '../db/tables.js';

export function toImportResponse(row: VariantImportRow) {
  return {
    id: row.id,
    status: row.status,
    format: row.format,
    mode: row.mode,
    on_error: row.on_error,
    dry_run: row.dry_run,
    rows_total: row.rows_total,
    rows_processed: row.rows_processed,
    created: row.created,
    updated: row.updated,
    unchanged: row.unchanged,
    failed: row.failed,
    first_errors: row.first_errors,
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
    started_at: row.started_at?.toISOString() ?? null,
    finished_at: row.finished_at?.toISOString() ?? null,
  };
}
