import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * The key a client address is counted under by the rate limits: an IPv4 address as it is, an
 * IPv6 address by its /64. One customer line or host gets a whole /64 (RFC 6177), so counting
 * each address of it apart would give an attacker 2^64 budgets. An IPv4 address in IPv6 form
 * (`::ffff:203.0.113.7`) counts as the IPv4 address.
 */
export function addressKey(address: string): string {
  if (isIP(address) !== 6) return address;
  try {
    const parsed = ipaddr.IPv6.parse(address.replace(/%.*$/, ''));
    if (parsed.isIPv4MappedAddress()) return parsed.toIPv4Address().toString();
    const parts = parsed.parts.slice(0, 4).map((part) => part.toString(16));
    return `${parts.join(':')}::/64`;
  } catch {
    return address;
  }
}

/**
 * The key of LOGIN_RATE_LIMIT's budget: one client address (by addressKey) and one email. A
 * login spends from it, and so does every other check of that account's password or second
 * factor (API.md sections 12 and 17), so they share the one budget.
 */
export function loginBudgetKey(address: string, email: string): string {
  return `login:${addressKey(address)}:${email.toLowerCase()}`;
}

/** The budget of email-code requests from an address for an email (POST /api/auth/email-code and the hosted pages' codes share it). */
export function emailCodeBudgetKey(address: string, email: string): string {
  return `email-code:${addressKey(address)}:${email.toLowerCase()}`;
}

/**
 * The key of the budget password-reset requests spend (API.md section 3: limited like logins,
 * per address and email), from the API and from the hosted forgotten-password page alike.
 */
export function passwordResetBudgetKey(address: string, email: string): string {
  return `reset:${addressKey(address)}:${email.toLowerCase()}`;
}

/**
 * The budgets of LOGIN_RATE_LIMIT a minute per client address for the two steps of a passkey
 * sign-in (API.md section 19), from the API and the hosted sign-in page alike. No account is
 * known before the passkey answers, so they count by address alone, each step apart: asking for
 * options does not eat the sign-ins' budget.
 */
export const passkeyOptionsBudgetKey = (address: string) => `passkey-options:${addressKey(address)}`;
export const passkeySignInBudgetKey = (address: string) => `passkey-sign-in:${addressKey(address)}`;
