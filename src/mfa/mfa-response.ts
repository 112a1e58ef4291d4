import type { MfaFactorRow } from '../db/tables.js';

export function toFactorResponse(factor: MfaFactorRow) {
  return {
    id: factor.id,
    type: factor.type,
    name: factor.name,
    created_at: factor.created_at.toISOString(),
    last_used_at: factor.last_used_at?.toISOString() ?? null,
  };
}

/** A factor just confirmed, with the recovery codes its confirmation made (the user's first factor). */
export function toConfirmedFactorResponse(factor: MfaFactorRow, recoveryCodes: string[] | undefined) {
  return { ...toFactorResponse(factor), ...(recoveryCodes ? { recovery_codes: recoveryCodes } : {}) };
}
