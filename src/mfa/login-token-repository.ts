import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, MfaLoginTokenRow } from '../db/tables.js';

export function insertLoginToken(
  trx: Transaction<Database>,
  token: { tokenHash: string; userId: string; sessionVersion: number; firstFactor: string; ttlSeconds: number },
): Promise<MfaLoginTokenRow> {
  const now = new Date();
  return trx
    .insertInto('mfa_login_tokens')
    .values({
      id: randomUUID(),
      token_hash: token.tokenHash,
      user_id: token.userId,
      session_version: token.sessionVersion,
      first_factor_amr: [token.firstFactor],
      created_at: now,
      expires_at: new Date(now.getTime() + token.ttlSeconds * 1000),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A login token by its hash, whatever its state. */
export function findLoginToken(db: Kysely<Database>, tokenHash: string): Promise<MfaLoginTokenRow | undefined> {
  return db.selectFrom('mfa_login_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

/** A login token locked: one second step at a time per token. */
export function lockLoginToken(trx: Transaction<Database>, id: string): Promise<MfaLoginTokenRow | undefined> {
  return trx.selectFrom('mfa_login_tokens').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

export async function countLoginTokenFailure(trx: Transaction<Database>, id: string): Promise<void> {
  await trx.updateTable('mfa_login_tokens').set({ failures: sql`failures + 1` }).where('id', '=', id).execute();
}

export async function spendLoginToken(trx: Transaction<Database>, id: string): Promise<void> {
  await trx.updateTable('mfa_login_tokens').set({ used_at: new Date() }).where('id', '=', id).execute();
}

/** Tokens an hour past their expiry are of no use, not even to explain a refusal. */
export async function deleteExpiredLoginTokens(db: Kysely<Database>): Promise<number> {
  const result = await db.deleteFrom('mfa_login_tokens').where('expires_at', '<', sql<Date>`now() - interval '1 hour'`).executeTakeFirst();
  return Number(result.numDeletedRows);
}
