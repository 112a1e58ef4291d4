import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { isUniqueViolation } from '../db/errors.js';
import type { Database, Role, UserRow, UserStatus } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { AppError } from '../http/errors.js';
import { changedFields, record, type EventContext, type NewEvent } from '../events/event-recorder.js';
import type { EventType } from '../events/event-types.js';
import { mergePatch } from '../http/merge-patch.js';
import { queueVerificationMail, type MailSettings } from './account-emails.js';
import { lockForWrite } from '../http/preconditions.js';
import { hashPassword } from '../sessions/passwords.js';
import { endSessions } from '../sessions/session-repository.js';
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
  /** The id to give the account; the service picks one when left out. */
  id?: string;
  /** True for the first admin, whose address the operator gave; anyone else gets a verification mail. */
  emailVerified?: boolean;
  email: string;
  password: string;
  name: string;
  phone?: string | null | undefined;
  role: Role;
}

const PROFILE_FIELDS = ['email', 'email_verified', 'name', 'phone'] as const;
const profileOf = (user: UserRow) => ({ email: user.email, email_verified: user.email_verified, name: user.name, phone: user.phone });

/**
 * Writes a profile change; a new email address is unverified until its owner follows the link
 * sent to it (and links sent to the old one stop working).
 */
async function writeProfile(
  trx: Kysely<Database>,
  current: UserRow,
  next: { name: string; email: string; phone: string | null },
  mail: MailSettings,
  context: EventContext,
): Promise<UserRow> {
  const emailChanged = next.email.toLowerCase() !== current.email.toLowerCase();
  const updated = await updateUser(trx, current.id, { ...next, ...(emailChanged ? { email_verified: false } : {}) });
  if (emailChanged) await queueVerificationMail(trx, mail, updated);
  return recordProfileChange(trx, current, updated, context);
}

/** Every account starts here: registration and the first admin alike. */
export async function createUser(db: Kysely<Database>, user: NewUser, context: EventContext, mail: MailSettings): Promise<UserRow> {
  const passwordHash = await hashPassword(user.password);
  const now = new Date();
  return translatingEmailConflict(() =>
    inTransaction(db, async (trx) => {
      const created = await insertUser(trx, {
        id: user.id ?? randomUUID(),
        email: user.email,
        name: user.name,
        phone: user.phone ?? null,
        role: user.role,
        status: 'active',
        password_hash: passwordHash,
        email_verified: user.emailVerified ?? false,
        created_at: now,
        updated_at: now,
      });
      await record(trx, userEvent('user.registered', created, { after: { ...profileOf(created), role: created.role, status: created.status } }), context);
      if (!created.email_verified) await queueVerificationMail(trx, mail, created);
      return created;
    }),
  );
}

const userEvent = (type: EventType, user: UserRow, data: Record<string, unknown>): NewEvent => ({
  type,
  subjectType: 'user',
  subjectId: user.id,
  data,
});

/** Records user.updated for a profile change that changed something. */
async function recordProfileChange(trx: Kysely<Database>, before: UserRow, after: UserRow, context: EventContext): Promise<UserRow> {
  await record(trx, userEvent('user.updated', after, changedFields(profileOf(before), profileOf(after), [...PROFILE_FIELDS])), context);
  return after;
}

export function replaceProfile(
  db: Kysely<Database>,
  userId: string,
  ifMatch: string | undefined,
  profile: { name: string; email: string; phone?: string | null | undefined },
  context: EventContext,
  mail: MailSettings,
): Promise<UserRow> {
  return onLockedUser(db, userId, ifMatch, (trx, current) =>
    writeProfile(trx, current, { name: profile.name, email: profile.email, phone: profile.phone ?? null }, mail, context),
  );
}

/** Runs a profile change on the locked row, after If-Match; a taken email is 409 `email_taken`. */
function onLockedUser(
  db: Kysely<Database>,
  userId: string,
  ifMatch: string | undefined,
  work: (trx: Transaction<Database>, current: UserRow) => Promise<UserRow>,
): Promise<UserRow> {
  return translatingEmailConflict(() =>
    inTransaction(db, async (trx) => work(trx, await lockForWrite(() => findUserByIdForUpdate(trx, userId), ifMatch, 'user'))),
  );
}

/** A merge patch of the profile; a patch that changes nothing writes nothing (the version stays). */
export function patchProfile(
  db: Kysely<Database>,
  userId: string,
  ifMatch: string | undefined,
  patch: { name?: string; email?: string; phone?: string | null },
  context: EventContext,
  mail: MailSettings,
): Promise<UserRow> {
  return onLockedUser(db, userId, ifMatch, async (trx, current) => {
      const profile = mergePatch({ name: current.name, email: current.email, phone: current.phone }, patch) as {
        name: string;
        email: string;
        phone?: string;
      };
      const next = { name: profile.name, email: profile.email, phone: profile.phone ?? null };
      if (next.name === current.name && next.email === current.email && next.phone === current.phone) return current;
      return writeProfile(trx, current, next, mail, context);
  });
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

/** An admin action on one user, with its optional reason, recorded with the change. */
export interface AdminAction {
  targetId: string;
  ifMatch: string | undefined;
  reason: string | undefined;
  context: EventContext;
}

const withReason = (data: Record<string, unknown>, reason: string | undefined) => (reason ? { ...data, reason } : data);

export function changeRole(db: Kysely<Database>, action: AdminAction, role: Role) {
  return guardedAdminChange(db, action.targetId, action.ifMatch, () => role === 'admin', async (trx, target) => {
    const updated = await updateUser(trx, target.id, { role });
    await record(trx, userEvent('user.role_changed', updated, withReason(changedFields(target, updated, ['role']), action.reason)), action.context);
    return updated;
  });
}

export function changeStatus(db: Kysely<Database>, action: AdminAction, status: UserStatus) {
  return guardedAdminChange(db, action.targetId, action.ifMatch, () => status === 'active', async (trx, target) => {
    const suspends = status === 'suspended' && target.status !== 'suspended';
    // Suspension ends every session: reactivation does not bring old tokens back.
    if (suspends) await endSessions(trx, { userId: target.id });
    const updated = await updateUser(trx, target.id, { status });
    const data = withReason({ ...changedFields(target, updated, ['status']), ...(suspends ? { sessions_ended: true } : {}) }, action.reason);
    await record(trx, userEvent('user.status_changed', updated, data), action.context);
    return updated;
  });
}

/** Soft delete: the row and its ledger stay; the email is free again and every token dies. */
export async function deleteUser(db: Kysely<Database>, action: AdminAction): Promise<void> {
  await guardedAdminChange(db, action.targetId, action.ifMatch, () => false, async (trx, target) => {
    const deleted = await updateUser(trx, target.id, { deleted_at: new Date() });
    await endSessions(trx, { userId: target.id });
    await record(trx, userEvent('user.deleted', deleted, withReason({ before: profileOf(target), sessions_ended: true }, action.reason)), action.context);
    return deleted;
  });
}
