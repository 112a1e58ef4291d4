import type { Kysely, Transaction } from 'kysely';
import type { Database, UserRow } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { record, SERVICE_CONTEXT, type EventContext } from '../events/event-recorder.js';
import { erasePersonalValues } from '../events/event-service.js';
import { AppError, notFound } from '../http/errors.js';
import { eraseIdentities } from '../federation/identity-service.js';
import { forgetRepliesAbout } from '../http/idempotency.js';
import { forgetMailTo } from '../mail/mail-outbox.js';
import { eraseSecondFactors } from '../mfa/second-factor-records.js';
import { deleteSessionsOfUser } from '../sessions/session-service.js';
import { claimUsersDueForErasure, eraseAccountRecords, forgetAttemptsAgainst, lockUserRecord } from '../users/account-erasure.js';
import { withSavepoint } from '../db/transaction.js';
import { addressesNobodyHolds, deleteUser, findUserRecord } from '../users/user-service.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const RETENTION_BATCH = 20;

/**
 * Erases a user (API.md section 13), in the caller's transaction: a live user is deleted first, as
 * an admin's DELETE would (sessions end; 409 `last_admin` for the last active admin); then each
 * owner removes what identifies the person from its own tables. A user erased before is left as
 * it is (the call succeeds, records nothing). 404 for an id that never was a user.
 */
export async function eraseUser(trx: Transaction<Database>, userId: string, reason: string, context: EventContext): Promise<void> {
  const existing = await findUserRecord(trx, userId);
  if (!existing) throw notFound('user');
  // The deletion locks the active admins and the user together, in id order, like every change
  // that may take an admin away. A deletion that got there first (a 404 here) is just as good.
  if (existing.deleted_at === null) await deleteUser(trx, { targetId: userId, ifMatch: undefined, reason, context }).catch(deletedMeanwhile);
  const user = (await lockUserRecord(trx, userId))!;
  if (user.erased_at !== null) return;
  await eraseDeletedUser(trx, user, reason, context);
}

/** The owners' parts of an erasure, for a deleted user whose row this transaction has locked. */
async function eraseDeletedUser(trx: Transaction<Database>, user: UserRow, reason: string, context: EventContext): Promise<void> {
  await deleteSessionsOfUser(trx, user.id);
  await eraseSecondFactors(trx, user.id);
  await eraseIdentities(trx, user.id);
  const eventEmails = await erasePersonalValues(trx, user.id);
  const accountEmails = await eraseAccountRecords(trx, user);
  // An address someone holds now (the deleted account's address is free to register again) keeps that account's mail.
  const forgotten = await addressesNobodyHolds(trx, [...new Set([...accountEmails, ...eventEmails])], user.id);
  await forgetMailTo(trx, forgotten);
  await forgetAttemptsAgainst(trx, forgotten);
  await forgetRepliesAbout(trx, user.id);
  await record(trx, { type: 'user.erased', subjectType: 'user', subjectId: user.id, data: { reason } }, context);
}

/**
 * Retention: deleted users are erased `days` after their deletion (0: never), by the service
 * itself (actor null). Each batch is claimed with FOR UPDATE SKIP LOCKED and erased in the
 * claiming transaction, so with several instances each user is erased, and recorded, once.
 */
export async function eraseDeletedUsersPastRetention(db: Kysely<Database>, days: number, log: { warn(object: object, message: string): void }): Promise<number> {
  if (days === 0) return 0;
  const reason = `deleted more than ${days} days ago (DELETED_USER_RETENTION_DAYS)`;
  let erased = 0;
  const failed = new Set<string>();
  for (;;) {
    const cutoff = new Date(Date.now() - days * DAY_MS);
    const batch = await inTransaction(db, async (trx) => {
      const due = (await claimUsersDueForErasure(trx, cutoff, RETENTION_BATCH + failed.size)).filter((user) => !failed.has(user.id));
      // Each user under a savepoint: one that cannot be erased is logged and left, the others go on.
      for (const user of due) {
        if (await eraseAlone(trx, user, reason)) erased += 1;
        else {
          failed.add(user.id);
          log.warn({ user_id: user.id }, 'a deleted user could not be erased; the next pass tries again');
        }
      }
      return due.length;
    });
    if (batch < RETENTION_BATCH) return erased;
  }
}

async function eraseAlone(trx: Transaction<Database>, user: UserRow, reason: string): Promise<boolean> {
  return withSavepoint(trx, 'erase_user', () => eraseDeletedUser(trx, user, reason, SERVICE_CONTEXT));
}

/** The deletion a concurrent request made first: the user is deleted either way. */
function deletedMeanwhile(error: unknown): void {
  if (!(error instanceof AppError && error.code === 'not_found')) throw error;
}
