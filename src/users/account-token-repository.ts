import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database, OneTimeTokenRow, TokenPurpose } from '../db/tables.js';

/** One-time tokens are stored only as SHA-256: 256 random bits need no slow hash. */
export const hashAccountToken = (token: string) => createHash('sha256').update(token).digest('hex');

/** A new token (43 base64url characters, 256 bits) for `purpose`; only its hash is stored. */
export async function createAccountToken(
  db: Kysely<Database>,
  token: { userId: string; purpose: TokenPurpose; email: string; ttlSeconds: number },
): Promise<string> {
  const value = randomBytes(32).toString('base64url');
  await db
    .insertInto('one_time_tokens')
    .values({
      id: randomUUID(),
      user_id: token.userId,
      purpose: token.purpose,
      token_hash: hashAccountToken(value),
      email: token.email,
      expires_at: new Date(Date.now() + token.ttlSeconds * 1000),
      created_at: new Date(),
    })
    .execute();
  return value;
}

/** The unspent, unexpired token with this value, locked so it can be spent once. */
export function findLiveAccountToken(db: Kysely<Database>, purpose: TokenPurpose, value: string): Promise<OneTimeTokenRow | undefined> {
  return db
    .selectFrom('one_time_tokens')
    .selectAll()
    .where('token_hash', '=', hashAccountToken(value))
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', new Date())
    .forUpdate()
    .executeTakeFirst();
}

/** Spends every outstanding token of a user for `purpose`. */
export async function spendAccountTokens(db: Kysely<Database>, userId: string, purpose: TokenPurpose): Promise<void> {
  await db.updateTable('one_time_tokens').set({ used_at: new Date() }).where('user_id', '=', userId).where('purpose', '=', purpose).where('used_at', 'is', null).execute();
}
