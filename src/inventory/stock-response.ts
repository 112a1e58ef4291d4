import type { StockMovementRow } from '../db/tables.js';

export function toMovementResponse(row: StockMovementRow) {
  return {
    id: row.id,
    variant_id: row.variant_id,
    delta: row.delta,
    stock_after: row.stock_after,
    reason: row.reason,
    reference: row.reference,
    actor_id: row.actor_id,
    created_at: row.created_at.toISOString(),
  };
}
