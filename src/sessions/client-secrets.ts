import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** API.md section 11: `shop_sk_` and 43 base64url characters, so secret scanners can find a leaked one. */
export const SECRET_PREFIX = 'shop_sk_';
export const SECRET_PATTERN = /^shop_sk_[A-Za-z0-9_-]{43}$/;
/** The part of a secret shown in lists, to recognise it. */
export const PREFIX_LENGTH = 12;

/** A new secret: 256 random bits. */
export const newClientSecret = () => `${SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;

/** Secrets are stored only as SHA-256: 256 random bits need no slow hash. */
export const hashClientSecret = (secret: string) => createHash('sha256').update(secret).digest('hex');

/** Whether a secret is the one a stored hash names, compared in constant time. */
export function secretMatches(secret: string, storedHash: string): boolean {
  const given = Buffer.from(hashClientSecret(secret), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return given.length === stored.length && timingSafeEqual(given, stored);
}
