import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Database, LedgerRow, UserRow } from '../db/tables.js';
import { assertIfMatch } from '../http/etag.js';
import { AppError, notFound, validationFailed } from '../http/errors.js';
import type { PageRequest } from '../http/pagination.js';
import { afterCursor } from '../db/keyset.js';
import { MAX_BALANCE } from './balance-schemas.js';
import { findUserByIdForUpdate, updateUser } from './user-repository.js';

export type BalanceChange = { delta: number; reason: string } | { balance: number; reason: string };

/**
 * Changes a balance and writes its ledger entry in the caller's transaction. The user's row
 * is locked first, so concurrent changes queue instead of overwriting each other; the CHECK
 * constraint on `users.balance` backs the bounds checked here.
 */
export async function applyBalanceChange(
  trx: Transaction<Database>,
  input: { userId: string; actorId: string; currency: string; ifMatch: string | undefined; change: BalanceChange },
): Promise<UserRow> {
  const user = await findUserByIdForUpdate(trx, input.userId);
  if (!user) throw notFound('user');
  assertIfMatch(input.ifMatch, user.version);
  const { change } = input;
  const balanceAfter = 'delta' in change ? user.balance + change.delta : change.balance;
  if (balanceAfter < 0) {
    throw new AppError(409, 'insufficient_funds', `The balance is ${user.balance}; it cannot go below zero.`);
  }
  if (balanceAfter > MAX_BALANCE) {
    throw validationFailed('delta' in change ? '/delta' : '/balance', `would take the balance above ${MAX_BALANCE}`);
  }
  // Strictly later than the previous change, so newest-first ledger order is the order of changes.
  const changedAt = new Date(Math.max(Date.now(), user.updated_at.getTime() + 1));
  const updated = await updateUser(trx, user.id, { balance: balanceAfter, updated_at: changedAt });
  await trx
    .insertInto('balance_ledger')
    .values({
      id: randomUUID(),
      user_id: user.id,
      delta: balanceAfter - user.balance,
      balance_after: balanceAfter,
      currency: input.currency,
      reason: change.reason,
      actor_id: input.actorId,
      created_at: changedAt,
    })
    .execute();
  return updated;
}

export function listLedgerEntries(db: Kysely<Database>, userId: string, page: PageRequest): Promise<LedgerRow[]> {
  let query = db.selectFrom('balance_ledger').selectAll().where('user_id', '=', userId);
  if (page.after) {
    const after = page.after;
    query = query.where((eb) => afterCursor(eb, after, 'older'));
  }
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit + 1).execute();
}

export async function countLedgerEntries(db: Kysely<Database>, userId: string): Promise<number> {
  const row = await db
    .selectFrom('balance_ledger')
    .select((eb) => eb.fn.countAll<number>().as('total'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(row.total);
}

export function toLedgerEntryResponse(row: LedgerRow) {
  return {
    id: row.id,
    user_id: row.user_id,
    delta: row.delta,
    balance_after: row.balance_after,
    currency: row.currency,
    reason: row.reason,
    actor_id: row.actor_id,
    created_at: row.created_at.toISOString(),
  };
}
