import type { AppConsentRow } from '../db/tables.js';

/** A consent as the user's list shows it: the app named, the scopes as granted. */
export function toConsentResponse(row: Pick<AppConsentRow, 'client_id' | 'scopes' | 'granted_at'> & { name: string; logo_uri: string | null }) {
  return { client_id: row.client_id, name: row.name, logo_uri: row.logo_uri, scopes: row.scopes, granted_at: new Date(row.granted_at).toISOString() };
}
