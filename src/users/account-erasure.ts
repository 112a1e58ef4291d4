import type { Transaction } from 'kysely';
import type { Database, UserRow } from '../db/tables.js';
import { deleteCodesOfUser } from './email-code-repository.js';
import { updateUser } from './user-repository.js';

/** What an erased account's row shows instead of the person (API.md section 13). */
export const ERASED_NAME = 'Erased user';
export const erasedEmail = (userId: string) => `erased-${userId}@erased.invalid`;

/** A user's row, deleted or not, locked for an erasure; undefined for an id that never was a user. */
export function lockUserRecord(trx: Transaction<Database>, id: string): Promise<UserRow | undefined> {
  return trx.selectFrom('users').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/**
 * The users area's part of an erasure, on a deleted user's locked row: the row keeps its id,
 * role, balance and times but loses email, name, phone and password (an empty hash verifies
 * nothing); the account's one-time tokens, email codes and the attempts counted against it go. Returns every
 * address the account is known to have used (the current one and those its tokens were sent
 * to), so the mail outbox can forget them too.
 */
export async function eraseAccountRecords(trx: Transaction<Database>, user: UserRow): Promise<string[]> {
  const tokens = await trx.deleteFrom('one_time_tokens').where('user_id', '=', user.id).returning('email').execute();
  const codeAddresses = await deleteCodesOfUser(trx, user.id);
  const addresses = [...new Set([user.email, ...tokens.map((token) => token.email), ...codeAddresses].map((address) => address.toLowerCase()))];
  await trx.deleteFrom('account_attempts').where('subject', '=', user.id).execute();
  await updateUser(trx, user.id, { email: erasedEmail(user.id), name: ERASED_NAME, phone: null, password_hash: '', erased_at: new Date() });
  return addresses;
}

/**
 * Deleted users whose retention has run out and who are not erased yet, locked, skipping rows
 * another instance holds: each is erased once, whichever instance gets it.
 */
export async function claimUsersDueForErasure(trx: Transaction<Database>, cutoff: Date, limit: number): Promise<UserRow[]> {
  return trx
    .selectFrom('users')
    .selectAll()
    .where('deleted_at', '<', cutoff)
    .where('erased_at', 'is', null)
    .orderBy('deleted_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
}

/** Failed logins counted against these addresses (an erasure's, for addresses nobody holds now). */
export async function forgetAttemptsAgainst(trx: Transaction<Database>, addresses: string[]): Promise<void> {
  if (addresses.length === 0) return;
  await trx.deleteFrom('account_attempts').where('subject', 'in', addresses).execute();
}
