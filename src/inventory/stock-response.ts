import type { StockMovementRow } from '../db/tables.js';

export function toMovementResponse(row: StockMovementRow) {
  return {
    id: row.id,
    variant_id: row.variant_id,
    location_id: row.location_id,
    delta: row.delta,
    stock_after: row.stock_after,
    reason: row.reason,
    reference: row.reference,
    actor_id: row.actor_id,
    created_at: row.created_at.toISOString(),
  };
}

/** A variant's stock per location (levelsAtEveryLocation's rows, in their order): the sums, `available` over active locations only. */
export function toVariantStockResponse(variantId: string, levels: { location_id: string; code: string; status: 'active' | 'inactive'; stock: number; reserved: number }[]) {
  const locations = levels.map((level) => ({ ...level, available: level.stock - level.reserved }));
  const sum = (figures: number[]) => figures.reduce((total, figure) => total + figure, 0);
  return {
    variant_id: variantId,
    stock: sum(locations.map((location) => location.stock)),
    reserved: sum(locations.map((location) => location.reserved)),
    available: sum(locations.filter((location) => location.status === 'active').map((location) => location.available)),
    locations,
  };
}
