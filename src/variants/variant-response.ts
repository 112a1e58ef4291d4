import type { VariantRow } from '../db/tables.js';
import type { VariantResponse } from './variant-schemas.js';

export function toVariantResponse(row: VariantRow, currency: string): VariantResponse {
  return {
    id: row.id,
    product_id: row.product_id,
    sku: row.sku,
    name: row.name,
    price: row.price,
    currency,
    stock: row.stock,
    reserved: row.reserved,
    // Active locations only (API.md section 21): what inactive ones hold is kept on the row.
    available: row.stock - row.reserved - row.available_at_inactive_locations,
    attributes: row.attributes,
    version: row.version,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
