import type { UserRow } from '../db/tables.js';

/** The user's claims an app's scopes allow (API.md section 18, "Tokens"): in the ID token and at userinfo alike. */
export function claimsForScopes(user: Pick<UserRow, 'id' | 'email' | 'email_verified' | 'name' | 'phone' | 'updated_at'>, scopes: readonly string[]): Record<string, unknown> {
  const claims: Record<string, unknown> = {};
  if (scopes.includes('email')) Object.assign(claims, { email: user.email, email_verified: user.email_verified });
  // OpenID Connect's updated_at is seconds since the epoch, not the API's RFC 3339 text.
  if (scopes.includes('profile')) Object.assign(claims, { name: user.name, updated_at: Math.floor(new Date(user.updated_at).getTime() / 1000) });
  if (scopes.includes('phone') && user.phone !== null) claims.phone_number = user.phone;
  return claims;
}
