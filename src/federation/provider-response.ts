import type { IdentityProviderRow } from '../db/tables.js';

/** A provider as replies show it: never its client secret or Apple private key, nor its discovery document. */
export function toIdentityProviderResponse(row: IdentityProviderRow) {
  return {
    id: row.id,
    name: row.name,
    issuer: row.issuer,
    client_id: row.client_id,
    scopes: row.scopes,
    button_label: row.button_label,
    link_by_verified_email: row.link_by_verified_email,
    enabled: row.enabled,
    apple_team_id: row.apple_team_id,
    apple_key_id: row.apple_key_id,
    version: row.version,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
