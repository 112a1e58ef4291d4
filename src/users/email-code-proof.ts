import { timingSafeEqual } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Database, UserRow } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { AppError } from '../http/errors.js';
import { beginLoginAttempt, loginSucceeded } from './account-limit-service.js';
import { countEmailCodeFailure, findLiveEmailCode, hashEmailCode, lockEmailCode, spendLiveEmailCode } from './email-code-repository.js';

export const invalidEmailCode = () => new AppError('invalid_email_code', 'The email code is unknown, expired, spent or wrong; ask for a new one.');

/** A code dies at its 5th wrong try. */
export const WRONG_TRIES_PER_CODE = 5;

/** Whether `code` is the code of this row: 6 digits whose hash is the row's, compared in constant time. */
export const codeMatches = (row: { id: string; code_hash: string }, code: string) =>
  /^\d{6}$/.test(code) && timingSafeEqual(Buffer.from(hashEmailCode(row.id, code), 'hex'), Buffer.from(row.code_hash, 'hex'));

/**
 * A code a signed-in user without a password sends where a request needs its password (API.md
 * section 19): one the user asked for at its own address, checked as a password is (counted
 * toward the account's failed logins until it proves right; past LOGIN_ACCOUNT_FAILURE_LIMIT
 * 429), a wrong one counted on the code and 400 `invalid_email_code`. Nothing is spent yet: the
 * change spends it under the user's row lock (spendCheckedEmailCode), so a change refused later
 * leaves it live. Returns the code's id.
 */
export async function checkOwnEmailCode(db: Kysely<Database>, user: UserRow, code: string, accountFailureLimit: number): Promise<string> {
  const attempt = await beginLoginAttempt(db, user.email, accountFailureLimit);
  const codeId = await inTransaction(db, async (trx) => {
    const live = await findLiveEmailCode(trx, user.email, WRONG_TRIES_PER_CODE);
    if (!live || live.user_id !== user.id) return undefined;
    const locked = await lockEmailCode(trx, live.id);
    if (!locked || locked.used_at || locked.expires_at.getTime() <= Date.now() || locked.failures >= WRONG_TRIES_PER_CODE) return undefined;
    if (codeMatches(locked, code.replace(/\s/g, ''))) return locked.id;
    await countEmailCodeFailure(trx, locked.id);
    return undefined;
  });
  if (!codeId) throw invalidEmailCode();
  await loginSucceeded(db, attempt);
  return codeId;
}

/** Spends a code checkOwnEmailCode found right, under the user's row lock; one spent since (by another request) is refused. */
export async function spendCheckedEmailCode(trx: Transaction<Database>, codeId: string): Promise<void> {
  if (!(await spendLiveEmailCode(trx, codeId))) throw invalidEmailCode();
}
