import type { ApiClientRow, ApiClientSecretRow } from '../db/tables.js';

const iso = (time: Date | null) => (time ? time.toISOString() : null);

/** A secret as the API shows it: by prefix, never its value or hash. */
export function toSecretResponse(row: ApiClientSecretRow) {
  return { id: row.id, prefix: row.prefix, created_at: row.created_at.toISOString(), expires_at: iso(row.expires_at), last_used_at: iso(row.last_used_at) };
}

export function toClientResponse(row: ApiClientRow, secrets: ApiClientSecretRow[]) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    type: row.type,
    scopes: row.scopes,
    status: row.status,
    rate_limit: row.rate_limit,
    version: row.version,
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    last_used_at: iso(row.last_used_at),
    secrets: secrets.filter((secret) => secret.client_id === row.id).map(toSecretResponse),
    // A service client shows these at their empty values: one shape for every type, as the route descriptions say (a choice of this service).
    redirect_uris: row.redirect_uris,
    post_logout_redirect_uris: row.post_logout_redirect_uris,
    first_party: row.first_party,
    logo_uri: row.logo_uri,
    id_token_signed_response_alg: row.id_token_signed_response_alg,
  };
}
