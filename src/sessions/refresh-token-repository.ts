import type { Kysely } from 'kysely';
import type { Database, RefreshTokenRow } from '../db/tables.js';

export async function insertRefreshToken(
  db: Kysely<Database>,
  token: { id: string; userId: string; familyId: string; tokenHash: string; expiresAt: Date },
): Promise<void> {
  await db
    .insertInto('refresh_tokens')
    .values({
      id: token.id,
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

/** Locks the token's row so two refreshes with one token cannot both succeed. */
export function findRefreshTokenForUpdate(db: Kysely<Database>, tokenHash: string): Promise<RefreshTokenRow | undefined> {
  return db.selectFrom('refresh_tokens').selectAll().where('token_hash', '=', tokenHash).forUpdate().executeTakeFirst();
}

export async function markRefreshTokenUsed(db: Kysely<Database>, id: string): Promise<void> {
  await db.updateTable('refresh_tokens').set({ used_at: new Date() }).where('id', '=', id).execute();
}

/** Revokes the live refresh tokens of one family, one token (by hash) or one user; returns whose they were. */
export async function revokeRefreshTokens(
  db: Kysely<Database>,
  which: { family_id: string } | { token_hash: string } | { user_id: string },
): Promise<string[]> {
  const [column, value] = Object.entries(which)[0] as ['family_id' | 'token_hash' | 'user_id', string];
  const revoked = await db
    .updateTable('refresh_tokens')
    .set({ revoked_at: new Date() })
    .where(column, '=', value)
    .where('revoked_at', 'is', null)
    .returning('user_id')
    .execute();
  return revoked.map((row) => row.user_id);
}

/** Refresh tokens expired for a day are of no use, not even to detect re-use. */
export async function deleteExpiredRefreshTokens(db: Kysely<Database>): Promise<number> {
  const result = await db
    .deleteFrom('refresh_tokens')
    .where('expires_at', '<', new Date(Date.now() - 24 * 60 * 60 * 1000))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
