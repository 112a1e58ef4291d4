import type { LocationRow } from '../db/tables.js';

export function toLocationResponse(row: LocationRow) {
  return {
    id: row.id,
    code: row.code,
    name: row.name,
    priority: row.priority,
    status: row.status,
    is_default: row.is_default,
    version: row.version,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
