import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { isUniqueViolation } from '../db/errors.js';
import type { Database, Role, UserRow, UserStatus } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { AppError } from '../http/errors.js';
import { mergePatch } from '../http/merge-patch.js';
import { lockForWrite } from '../http/preconditions.js';
import { hashPassword } from '../sessions/passwords.js';
import { revokeRefreshTokens } from '../sessions/refresh-token-repository.js';
import { findUserByIdForUpdate, insertUser, lockActiveAdminsAndTarget, updateUser } from './user-repository.js';

const emailTaken = () => new AppError('email_taken', 'Another account uses this email address.');

/** The database's unique index on lower(email) is the rule; this names it for the client. */
async function translatingEmailConflict<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error, 'users_email_unique')) throw emailTaken();
    throw error;
  }
}

export interface NewUser {
  email: string;
  password: string;
  name: string;
  phone?: string | null | undefined;
  role: Role;
}

/** Every account starts here: registration and the first admin alike. */
export async function createUser(db: Kysely<Database>, user: NewUser): Promise<UserRow> {
  const passwordHash = await hashPassword(user.password);
  const now = new Date();
  return translatingEmailConflict(() =>
    insertUser(db, {
      id: randomUUID(),
      email: user.email,
      name: user.name,
      phone: user.phone ?? null,
      role: user.role,
      status: 'active',
      password_hash: passwordHash,
      created_at: now,
      updated_at: now,
    }),
  );
}

export function replaceProfile(
  db: Kysely<Database>,
  userId: string,
  ifMatch: string | undefined,
  profile: { name: string; email: string; phone?: string | null | undefined },
): Promise<UserRow> {
  return translatingEmailConflict(() =>
    inTransaction(db, async (trx) => {
      await lockForWrite(() => findUserByIdForUpdate(trx, userId), ifMatch, 'user');
      return updateUser(trx, userId, { name: profile.name, email: profile.email, phone: profile.phone ?? null });
    }),
  );
}

/** A merge patch of the profile; a patch that changes nothing writes nothing (the version stays). */
export function patchProfile(
  db: Kysely<Database>,
  userId: string,
  ifMatch: string | undefined,
  patch: { name?: string; email?: string; phone?: string | null },
): Promise<UserRow> {
  return translatingEmailConflict(() =>
    inTransaction(db, async (trx) => {
      const current = await lockForWrite(() => findUserByIdForUpdate(trx, userId), ifMatch, 'user');
      const profile = mergePatch({ name: current.name, email: current.email, phone: current.phone }, patch) as {
        name: string;
        email: string;
        phone?: string;
      };
      const next = { name: profile.name, email: profile.email, phone: profile.phone ?? null };
      if (next.name === current.name && next.email === current.email && next.phone === current.phone) return current;
      return updateUser(trx, userId, next);
    }),
  );
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
    // Already locked by the statement above; read in full under that lock.
    const target = await lockForWrite(() => findUserByIdForUpdate(trx, targetId), ifMatch, 'user');
    const losesAdmin = isActiveAdmin(target) && !stillActiveAdminAfter(target);
    if (losesAdmin && activeAdminIds.filter((id) => id !== target.id).length === 0) {
      throw new AppError('last_admin', 'This would leave the service without an active admin.');
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
    async (trx, target) => {
      if (status === 'active' || target.status === 'suspended') return updateUser(trx, targetId, { status });
      // Suspension ends every session: reactivation does not bring old tokens back.
      await revokeRefreshTokens(trx, { user_id: targetId });
      return updateUser(trx, targetId, { status, session_version: target.session_version + 1 });
    },
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
      const deleted = await updateUser(trx, targetId, { deleted_at: new Date(), session_version: target.session_version + 1 });
      await revokeRefreshTokens(trx, { user_id: targetId });
      return deleted;
    },
  );
}
