/** An identity as the user's list shows it: its provider named, never its `sub`. */
export function toIdentityResponse(row: { id: string; provider_id: string; provider_name: string; email: string | null; linked_at: Date; last_used_at: Date | null }) {
  return {
    id: row.id,
    provider_id: row.provider_id,
    provider_name: row.provider_name,
    email: row.email,
    linked_at: new Date(row.linked_at).toISOString(),
    last_used_at: row.last_used_at === null ? null : new Date(row.last_used_at).toISOString(),
  };
}
