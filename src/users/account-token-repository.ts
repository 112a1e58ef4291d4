import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database, OneTimeTokenRow, TokenPurpose } from '../db/tables.js';

/** One-time tokens are looked up by SHA-256: 256 random bits need no slow hash. */
export const hashAccountToken = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * A new token (43 base64url characters, 256 bits), looked up by its hash. `sealed` is the value
 * as secrets-at-rest keeps it, for a token that may be sent again while it lives.
 */
export async function createAccountToken(
  db: Kysely<Database>,
  token: { userId: string; purpose: TokenPurpose; email: string; ttlSeconds: number; seal?: (value: string) => string },
): Promise<{ value: string; expiresAt: Date }> {
  const value = randomBytes(32).toString('base64url');
  const expiresAt = new Date(Date.now() + token.ttlSeconds * 1000);
  await db
    .insertInto('one_time_tokens')
    .values({
      id: randomUUID(),
      user_id: token.userId,
      purpose: token.purpose,
      token_hash: hashAccountToken(value),
      email: token.email,
      expires_at: expiresAt,
      created_at: new Date(),
      sealed_token: token.seal ? token.seal(value) : null,
    })
    .execute();
  return { value, expiresAt };
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

/** Whether a token with this value could be spent now, without locking: read before any costly work. */
export async function accountTokenIsLive(db: Kysely<Database>, purpose: TokenPurpose, value: string): Promise<boolean> {
  const row = await db
    .selectFrom('one_time_tokens')
    .select('id')
    .where('token_hash', '=', hashAccountToken(value))
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', new Date())
    .executeTakeFirst();
  return row !== undefined;
}

/** The newest live token of a user for `purpose` that was sent to `email` and can be sent again. */
export function findResendableAccountToken(db: Kysely<Database>, userId: string, purpose: TokenPurpose, email: string): Promise<OneTimeTokenRow | undefined> {
  return db
    .selectFrom('one_time_tokens')
    .selectAll()
    .where('user_id', '=', userId)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', new Date())
    .where('sealed_token', 'is not', null)
    .where(sql<string>`lower(email)`, '=', email.toLowerCase())
    .orderBy('created_at', 'desc')
    .executeTakeFirst();
}

/** Tokens of a user for `purpose` made within the last `seconds`. */
export async function countRecentAccountTokens(db: Kysely<Database>, userId: string, purpose: TokenPurpose, seconds: number): Promise<number> {
  const row = await db
    .selectFrom('one_time_tokens')
    .select(sql<string>`count(*)`.as('count'))
    .where('user_id', '=', userId)
    .where('purpose', '=', purpose)
    .where('created_at', '>', new Date(Date.now() - seconds * 1000))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Spends every outstanding token of a user for `purpose`; a spent token keeps no sealed value. */
export async function spendAccountTokens(db: Kysely<Database>, userId: string, purpose: TokenPurpose): Promise<void> {
  await db
    .updateTable('one_time_tokens')
    .set({ used_at: new Date(), sealed_token: null })
    .where('user_id', '=', userId)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .execute();
}

/** Expired tokens keep no sealed value either. */
export async function clearExpiredSealedTokens(db: Kysely<Database>): Promise<number> {
  const result = await db.updateTable('one_time_tokens').set({ sealed_token: null }).where('sealed_token', 'is not', null).where('expires_at', '<=', new Date()).executeTakeFirst();
  return Number(result.numUpdatedRows);
}
