import type { LedgerRow } from '../db/tables.js';

export function toLedgerEntryResponse(row: LedgerRow) {
  return {
    id: row.id,
    user_id: row.user_id,
    delta: row.delta,
    balance_after: row.balance_after,
    currency: row.currency,
    reason: row.reason,
    actor_id: row.actor_id,
    created_at: row.created_at.toISOString(),
  };
}
