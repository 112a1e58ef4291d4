import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/tables.js';

/** The user's recovery codes become these (their hashes); the old ones are void. */
export async function replaceRecoveryCodes(trx: Transaction<Database>, userId: string, hashes: string[]): Promise<void> {
  await deleteRecoveryCodes(trx, userId);
  const now = new Date();
  await trx
    .insertInto('mfa_recovery_codes')
    .values(hashes.map((code_hash) => ({ id: randomUUID(), user_id: userId, code_hash, created_at: now })))
    .execute();
}

/** Spends an unused code of the user; false when there is none with this hash. */
export async function spendRecoveryCode(trx: Transaction<Database>, userId: string, hash: string): Promise<boolean> {
  const spent = await trx
    .updateTable('mfa_recovery_codes')
    .set({ used_at: new Date() })
    .where('user_id', '=', userId)
    .where('code_hash', '=', hash)
    .where('used_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  return spent !== undefined;
}

export async function countRecoveryCodesLeft(db: Kysely<Database>, userId: string): Promise<number> {
  const row = await db.selectFrom('mfa_recovery_codes').select((eb) => eb.fn.countAll<number>().as('count')).where('user_id', '=', userId).where('used_at', 'is', null).executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function deleteRecoveryCodes(trx: Transaction<Database>, userId: string): Promise<void> {
  await trx.deleteFrom('mfa_recovery_codes').where('user_id', '=', userId).execute();
}
