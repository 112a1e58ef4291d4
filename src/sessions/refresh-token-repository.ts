import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database, RefreshTokenRow } from '../db/tables.js';

export async function insertRefreshToken(db: Kysely<Database>, token: { userId: string; familyId: string; tokenHash: string; expiresAt: Date }): Promise<void> {
  await db
    .insertInto('refresh_tokens')
    .values({
      id: randomUUID(),
      user_id: token.userId,
      family_id: token.familyId,
      token_hash: token.tokenHash,
      expires_at: token.expiresAt,
      created_at: new Date(),
    })
    .execute();
}

export function findRefreshToken(db: Kysely<Database>, tokenHash: string): Promise<RefreshTokenRow | undefined> {
  return db.selectFrom('refresh_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

/** Locks the token's row so two refreshes with one token cannot both rotate it. */
export function findRefreshTokenForUpdate(db: Kysely<Database>, tokenHash: string): Promise<RefreshTokenRow | undefined> {
  return db.selectFrom('refresh_tokens').selectAll().where('token_hash', '=', tokenHash).forUpdate().executeTakeFirst();
}

/** Spends a token, keeping its successor sealed for a replay within the reuse interval. */
export async function markRefreshTokenRotated(db: Kysely<Database>, id: string, successorSealed: string): Promise<void> {
  await db.updateTable('refresh_tokens').set({ used_at: new Date(), successor_sealed: successorSealed }).where('id', '=', id).execute();
}

/** Refresh tokens expired for a day are of no use, not even to detect re-use. */
export async function deleteExpiredRefreshTokens(db: Kysely<Database>): Promise<number> {
  const result = await db
    .deleteFrom('refresh_tokens')
    .where('expires_at', '<', new Date(Date.now() - 24 * 60 * 60 * 1000))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
