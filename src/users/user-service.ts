import type { Kysely, Transaction } from 'kysely';
import { revokeAllRefreshTokensOfUser } from '../auth/refresh-token-repository.js';
import { isUniqueViolation } from '../db/errors.js';
import type { Database, Role, UserRow, UserStatus, UserUpdate } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { assertIfMatch } from '../http/etag.js';
import { AppError, notFound } from '../http/errors.js';
import { findUserById, findUserByIdForUpdate, lockActiveAdminsAndTarget, updateUser } from './user-repository.js';

export const emailTaken = () => new AppError(409, 'email_taken', 'Another account uses this email address.');

/** Runs `write` with the user's row locked after If-Match was checked against it. */
export function updateLockedUser(
  db: Kysely<Database>,
  userId: string,
  ifMatch: string | undefined,
  write: (trx: Transaction<Database>, user: UserRow) => Promise<UserRow>,
): Promise<UserRow> {
  return inTransaction(db, async (trx) => {
    const user = await findUserByIdForUpdate(trx, userId);
    if (!user) throw notFound('user');
    assertIfMatch(ifMatch, user.version);
    return write(trx, user);
  });
}

export async function replaceProfile(
  db: Kysely<Database>,
  userId: string,
  ifMatch: string | undefined,
  profile: { name: string; email: string; phone?: string | null | undefined },
): Promise<UserRow> {
  try {
    return await updateLockedUser(db, userId, ifMatch, (trx) =>
      updateUser(trx, userId, { name: profile.name, email: profile.email, phone: profile.phone ?? null }),
    );
  } catch (error) {
    if (isUniqueViolation(error, 'users_email_unique')) throw emailTaken();
    throw error;
  }
}

const isActiveAdmin = (user: UserRow) => user.role === 'admin' && user.status === 'active';

/**
 * Applies an admin action that may take away an active admin: locks every active admin and
 * the target together, in id order, and refuses with `last_admin` when no other active
 * admin would remain.
 */
function guardedAdminChange(
  db: Kysely<Database>,
  targetId: string,
  ifMatch: string | undefined,
  stillActiveAdminAfter: (target: UserRow) => boolean,
  write: (trx: Transaction<Database>, target: UserRow) => Promise<UserRow>,
): Promise<UserRow> {
  return inTransaction(db, async (trx) => {
    const activeAdminIds = await lockActiveAdminsAndTarget(trx, targetId);
    const target = await findUserById(trx, targetId);
    if (!target) throw notFound('user');
    assertIfMatch(ifMatch, target.version);
    const losesAdmin = isActiveAdmin(target) && !stillActiveAdminAfter(target);
    if (losesAdmin && activeAdminIds.filter((id) => id !== target.id).length === 0) {
      throw new AppError(409, 'last_admin', 'This would leave the service without an active admin.');
    }
    return write(trx, target);
  });
}

export function changeRole(db: Kysely<Database>, targetId: string, ifMatch: string | undefined, role: Role) {
  return guardedAdminChange(db, targetId, ifMatch, () => role === 'admin', (trx) => updateUser(trx, targetId, { role }));
}

export function changeStatus(db: Kysely<Database>, targetId: string, ifMatch: string | undefined, status: UserStatus) {
  return guardedAdminChange(
    db,
    targetId,
    ifMatch,
    () => status === 'active',
    (trx) => updateUser(trx, targetId, { status }),
  );
}

/** Soft delete: the row and its ledger stay; the email is free again and every token dies. */
export async function deleteUser(db: Kysely<Database>, targetId: string, ifMatch: string | undefined): Promise<void> {
  await guardedAdminChange(
    db,
    targetId,
    ifMatch,
    () => false,
    async (trx, target) => {
      const change: UserUpdate = { deleted_at: new Date(), session_version: target.session_version + 1 };
      const deleted = await updateUser(trx, targetId, change);
      await revokeAllRefreshTokensOfUser(trx, targetId);
      return deleted;
    },
  );
}
