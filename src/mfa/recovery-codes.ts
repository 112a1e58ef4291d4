import { createHash, randomBytes } from 'node:crypto';

export const RECOVERY_CODE_COUNT = 10;
/** Crockford's base32: no i, l, o or u, so nothing reads as another character. */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * A recovery code: 16 base32 characters (80 random bits), shown in groups of four
 * (`k7mq-2xrp-9ajd-h4wt`). Random enough that a fast hash is enough to store it.
 */
export function newRecoveryCode(): string {
  const characters = [...randomBytes(16)].map((byte) => ALPHABET[byte & 31]!);
  return characters.join('').match(/.{4}/g)!.join('-');
}

/** A code as the user may type it: any case, with or without dashes and spaces, o for 0, i or l for 1. */
export const normalizeRecoveryCode = (typed: string): string =>
  typed
    .toLowerCase()
    .replace(/[\s-]/g, '')
    .replace(/o/g, '0')
    .replace(/[il]/g, '1');

/** How a code is stored: the SHA-256 of its normalized form. */
export const hashRecoveryCode = (typed: string): string => createHash('sha256').update(normalizeRecoveryCode(typed)).digest('hex');
