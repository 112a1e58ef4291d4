import type { UserRow } from '../db/tables.js';
import type { UserResponse } from './user-schemas.js';

/** The public shape of a user: never the password hash or session data. */
export function toUserResponse(row: UserRow, currency: string): UserResponse {
  return {
    id: row.id,
    email: row.email,
    email_verified: row.email_verified,
    has_password: row.password_hash !== null,
    name: row.name,
    phone: row.phone,
    role: row.role,
    status: row.status,
    balance: row.balance,
    currency,
    version: row.version,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
