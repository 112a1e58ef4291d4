/** The keys whose values name a person, wherever they sit in an event's `data` (API.md section 13). */
const PERSONAL_KEYS = new Set(['email', 'name', 'phone']);
export const ERASED_VALUE = '[erased]';

/**
 * `data` with every non-null value of an `email`, `name` or `phone` key, at any depth (`before`
 * and `after` included, arrays too), replaced by "[erased]". The email addresses it replaced are
 * added to `emails`, so the mail outbox can forget them as well.
 */
export function withoutPersonalValues(value: unknown, emails: Set<string>): unknown {
  if (Array.isArray(value)) return value.map((item) => withoutPersonalValues(item, emails));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, child]) => {
      if (!PERSONAL_KEYS.has(key) || child === null) return [key, withoutPersonalValues(child, emails)];
      if (key === 'email' && typeof child === 'string') emails.add(child.toLowerCase());
      return [key, ERASED_VALUE];
    }),
  );
}
