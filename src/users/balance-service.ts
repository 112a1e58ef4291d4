import type { Transaction } from 'kysely';
import type { Database, UserRow } from '../db/tables.js';
import { record, type EventContext } from '../events/event-recorder.js';
import { AppError, validationFailed } from '../http/errors.js';
import { lockForWrite } from '../http/preconditions.js';
import { insertLedgerEntry } from './balance-repository.js';
import { MAX_BALANCE } from './balance-schemas.js';
import { findUserByIdForUpdate, updateUser } from './user-repository.js';

/** The ledger, oldest first, for a data export (privacy). */
export { ledgerOldestFirstPage } from './balance-repository.js';

export type BalanceChange = { delta: number; reason: string } | { balance: number; reason: string };

/**
 * Changes a balance and writes its ledger entry in the caller's transaction. The user's row
 * is locked first, so concurrent changes queue instead of overwriting each other; the CHECK
 * constraint on `users.balance` backs the bounds checked here.
 */
export async function applyBalanceChange(
  trx: Transaction<Database>,
  input: { userId: string; currency: string; ifMatch: string | undefined; change: BalanceChange; context: EventContext },
): Promise<UserRow> {
  const user = await lockForWrite(() => findUserByIdForUpdate(trx, input.userId), input.ifMatch, 'user');
  const { change } = input;
  const balanceAfter = 'delta' in change ? user.balance + change.delta : change.balance;
  if (balanceAfter < 0) {
    throw new AppError('insufficient_funds', `The balance is ${user.balance}; it cannot go below zero.`);
  }
  if (balanceAfter > MAX_BALANCE) {
    throw validationFailed('delta' in change ? '/delta' : '/balance', `would take the balance above ${MAX_BALANCE}`);
  }
  // Strictly later than the previous change, so newest-first ledger order is the order of changes.
  const changedAt = new Date(Math.max(Date.now(), user.updated_at.getTime() + 1));
  const updated = await updateUser(trx, user.id, { balance: balanceAfter, updated_at: changedAt });
  const delta = balanceAfter - user.balance;
  await insertLedgerEntry(trx, {
    user_id: user.id,
    delta,
    balance_after: balanceAfter,
    currency: input.currency,
    reason: change.reason,
    // A balance change is always an admin's request, so it has an actor.
    actor_id: input.context.actorId!,
    created_at: changedAt,
  });
  await record(
    trx,
    {
      type: 'user.balance_changed',
      subjectType: 'user',
      subjectId: user.id,
      data: { before: { balance: user.balance }, after: { balance: balanceAfter }, delta, balance_after: balanceAfter, currency: input.currency, reason: change.reason },
    },
    input.context,
  );
  return updated;
}
