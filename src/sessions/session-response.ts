import type { SessionRow } from '../db/tables.js';

export function toSessionResponse(row: SessionRow, currentSessionId: string | undefined) {
  return {
    id: row.id,
    created_at: row.created_at.toISOString(),
    last_used_at: row.last_used_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
    user_agent: row.user_agent,
    ip: row.ip,
    current: row.id === currentSessionId,
    mfa_verified_at: row.mfa_verified_at?.toISOString() ?? null,
  };
}

/** A session as a data export shows it: ended ones too, with when they ended. */
export function toSessionRecord(row: SessionRow) {
  const { current: _current, ...session } = toSessionResponse(row, undefined);
  return { ...session, ended_at: row.ended_at?.toISOString() ?? null };
}
