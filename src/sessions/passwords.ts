import { Algorithm, hash, verify } from '@node-rs/argon2';

// OWASP Password Storage Cheat Sheet: argon2id, 19 MiB, 2 iterations, 1 lane.
const ARGON2_OPTIONS = { algorithm: Algorithm.Argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/** Hashes on libuv's thread pool, so the event loop keeps serving. */
export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2_OPTIONS);
}

let dummyHash: Promise<string> | undefined;

/**
 * Verifies a password; with no stored hash (an unknown email, or an account without a password)
 * it verifies against a dummy hash, so every failure costs the same time and an attacker cannot
 * tell which accounts exist or which have a password.
 */
export async function verifyPassword(storedHash: string | null | undefined, password: string): Promise<boolean> {
  dummyHash ??= hashPassword('dummy-password-for-timing-equalisation');
  const target = storedHash ?? (await dummyHash);
  try {
    const matches = await verify(target, password);
    return storedHash !== undefined && storedHash !== null && matches;
  } catch {
    return false;
  }
}
