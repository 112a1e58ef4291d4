import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { isUniqueViolation } from '../db/errors.js';
import type { Database, Role, UserRow, UserStatus } from '../db/tables.js';
import { AppError, validationFailed } from '../http/errors.js';
import { changedFields, record, type EventContext, type NewEvent } from '../events/event-recorder.js';
import type { EventType } from '../events/event-types.js';
import { mergePatch } from '../http/merge-patch.js';
import type { MailLocale } from '../mail/mail-messages.js';
import { queueEmailChangedNotice, queueVerificationMail, type MailSettings } from './account-emails.js';
import { lockForWrite } from '../http/preconditions.js';
import { countEmailChange, verifyPasswordLikeLogin } from './account-limit-service.js';
import { spendAccountTokens } from './account-token-repository.js';
import { spendCodesOfUser } from './email-code-repository.js';
import { checkOwnEmailCode, spendCheckedEmailCode } from './email-code-proof.js';
import { endEverySession } from './credential-changes.js';
import { findUserByIdForUpdate, insertUser, lockActiveAdminsAndTarget, updateUser } from './user-repository.js';

/** The reads other areas make of users' rows: a login's (auth, mfa), a factor change's lock (mfa), an erasure's (privacy). */
export { addressesNobodyHolds, findUserByEmail, findUserById, findUserByIdForUpdate, findUserRecord, lockUserForLogin } from './user-repository.js';

const emailTaken = () => new AppError('email_taken', 'Another account uses this email address.');
export const wrongPassword = () => new AppError('wrong_password', 'The current password is wrong.');
/** What a request that needs the caller's password lacks: the password, or for an account without one an email code. */
export const proofNeeded = (user: UserRow, passwordField: string, purpose: string) =>
  user.password_hash === null
    ? validationFailed('/email_code', `is required ${purpose}: this account has no password (ask for a code at POST /api/auth/email-code)`)
    : validationFailed(`/${passwordField}`, `is required ${purpose}`);
const passwordNeeded = (user: UserRow) => proofNeeded(user, 'current_password', 'to change the email address');

/**
 * The caller's own password, sent to change the password or the email or to delete the account:
 * checked like a login's (argon2, outside any transaction), counted toward the account's failed
 * logins; past LOGIN_ACCOUNT_FAILURE_LIMIT 429 whatever the password, else 403 `wrong_password`.
 */
export async function confirmOwnPassword(db: Kysely<Database>, user: UserRow, password: string, accountFailureLimit: number): Promise<void> {
  if (!(await verifyPasswordLikeLogin(db, user, password, accountFailureLimit))) throw wrongPassword();
}

/** How the caller proved itself again: its password (the hash it was checked against), or for an account without a password an email code. */
export interface Reauthentication {
  checkedHash: string | null;
  /** The email code found right (email-code-proof.ts), which the change spends under the user's row lock. */
  codeId?: string;
}

/**
 * The proof a request sent in place of a login (API.md sections 17 and 19): an account with a
 * password sends the password (`email_code` is then a 400), one without a password sends an
 * email code it asked for (a password is then a 400); either is checked like a login and counted
 * toward the account's failed logins. Undefined when neither was sent.
 */
export async function reauthenticate(
  db: Kysely<Database>,
  user: UserRow,
  sent: { password: string | undefined; emailCode: string | undefined; passwordField: string },
  accountFailureLimit: number,
): Promise<Reauthentication | undefined> {
  if (user.password_hash === null) {
    if (sent.password !== undefined) throw validationFailed(`/${sent.passwordField}`, 'cannot be checked: this account has no password (send `email_code` instead)');
    if (sent.emailCode === undefined) return undefined;
    return { checkedHash: null, codeId: await checkOwnEmailCode(db, user, sent.emailCode, accountFailureLimit) };
  }
  if (sent.emailCode !== undefined) throw validationFailed('/email_code', 'is only for an account without a password: send the password instead');
  if (sent.password === undefined) return undefined;
  await confirmOwnPassword(db, user, sent.password, accountFailureLimit);
  return { checkedHash: user.password_hash };
}

/** The check of a Reauthentication under the user's row lock: the password is still the one checked, and the code (if any) still live, now spent. */
async function stillReauthenticated(trx: Transaction<Database>, current: UserRow, checked: Reauthentication): Promise<void> {
  if (current.password_hash !== checked.checkedHash) throw wrongPassword();
  if (checked.codeId) await spendCheckedEmailCode(trx, checked.codeId);
}

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
  /** argon2id, hashed before the transaction (passwords.ts); null for an account without a password. */
  passwordHash: string | null;
  /** How the account was made, recorded in user.registered when it is not a password's way (an email code). */
  method?: 'email_code' | 'federation';
  name: string;
  phone?: string | null | undefined;
  role: Role;
  /** The language of the verification mail: a hosted page's (API.md section 18); English when unset. */
  language?: MailLocale;
}

const PROFILE_FIELDS = ['email', 'email_verified', 'name', 'phone'] as const;
const profileOf = (user: UserRow) => ({ email: user.email, email_verified: user.email_verified, name: user.name, phone: user.phone });

/**
 * Writes a profile change. A new email address (a change of letter case included) is
 * unverified until its owner follows the link sent to it; links sent before stop working,
 * reset links and email sign-in codes too, and the address the account leaves gets a notice. At most 5 email changes
 * in 24 hours (429; a refused change does not count).
 */
async function writeProfile(
  trx: Transaction<Database>,
  current: UserRow,
  next: { name: string; email: string; phone: string | null },
  mail: MailSettings,
  context: EventContext,
): Promise<UserRow> {
  const emailChanged = next.email !== current.email;
  if (emailChanged) await countEmailChange(trx, current.id);
  const updated = await updateUser(trx, current.id, { ...next, ...(emailChanged ? { email_verified: false } : {}) });
  if (emailChanged) {
    await spendAccountTokens(trx, current.id, 'password_reset');
    // A sign-in code of the account, or one sent to either address before, proves nothing of the account now.
    await spendCodesOfUser(trx, current.id, [current.email, updated.email]);
    await queueVerificationMail(trx, mail, updated);
    await queueEmailChangedNotice(trx, current.email, updated.email);
  }
  return recordProfileChange(trx, current, updated, context);
}

/** Every account starts here: registration and the first admin alike (the password hashed before, outside any transaction). */
export function createUser(trx: Transaction<Database>, user: NewUser, context: EventContext, mail: MailSettings): Promise<UserRow> {
  const now = new Date();
  return translatingEmailConflict(async () => {
    const created = await insertUser(trx, {
      id: user.id ?? randomUUID(),
      email: user.email,
      name: user.name,
      phone: user.phone ?? null,
      role: user.role,
      status: 'active',
      password_hash: user.passwordHash,
      email_verified: user.emailVerified ?? false,
      created_at: now,
      updated_at: now,
    });
    const data = { after: { ...profileOf(created), role: created.role, status: created.status }, ...(user.method ? { method: user.method } : {}) };
    await record(trx, userEvent('user.registered', created, data), context);
    if (!created.email_verified) await queueVerificationMail(trx, mail, created, user.language);
    return created;
  });
}

const userEvent = (type: EventType, user: UserRow, data: Record<string, unknown>): NewEvent => ({
  type,
  subjectType: 'user',
  subjectId: user.id,
  data,
});

/** Records user.updated for a profile change that changed something. */
async function recordProfileChange(trx: Transaction<Database>, before: UserRow, after: UserRow, context: EventContext): Promise<UserRow> {
  await record(trx, userEvent('user.updated', after, changedFields(profileOf(before), profileOf(after), [...PROFILE_FIELDS])), context);
  return after;
}

/** A profile change as the caller sent it: the fields, and the password (or, without one, the email code) that allows an email change. */
export interface ProfileChange<Fields> {
  fields: Fields;
  currentPassword: string | undefined;
  emailCode: string | undefined;
  /** LOGIN_ACCOUNT_FAILURE_LIMIT, which a wrong password counts toward. */
  accountFailureLimit: number;
}

/** A profile change whose password or email code (when sent) was checked against the user as read. */
export interface CheckedProfileChange {
  nextOf: (current: UserRow) => { name: string; email: string; phone: string | null };
  /** The proof checked; undefined when none was sent. */
  checked: Reauthentication | undefined;
}

/**
 * The check of a profile change that needs argon2, outside any transaction: the current
 * password (or, for an account without one, an email code), when sent, must be right (and counts
 * like a login, see reauthenticate), and must be sent when the email changes.
 */
async function checkProfileChange(db: Kysely<Database>, read: UserRow, change: ProfileChange<unknown>, nextOf: CheckedProfileChange['nextOf']): Promise<CheckedProfileChange> {
  const sent = { password: change.currentPassword, emailCode: change.emailCode, passwordField: 'current_password' };
  const checked = await reauthenticate(db, read, sent, change.accountFailureLimit);
  if (!checked && nextOf(read).email !== read.email) throw passwordNeeded(read);
  return { nextOf, checked };
}

export function checkReplacement(db: Kysely<Database>, read: UserRow, change: ProfileChange<{ name: string; email: string; phone?: string | null | undefined }>): Promise<CheckedProfileChange> {
  const { fields } = change;
  return checkProfileChange(db, read, change, () => ({ name: fields.name, email: fields.email, phone: fields.phone ?? null }));
}

export function checkPatch(db: Kysely<Database>, read: UserRow, change: ProfileChange<{ name?: string; email?: string; phone?: string | null }>): Promise<CheckedProfileChange> {
  return checkProfileChange(db, read, change, (current) => {
    const profile = mergePatch({ name: current.name, email: current.email, phone: current.phone }, change.fields) as { name: string; email: string; phone?: string };
    return { name: profile.name, email: profile.email, phone: profile.phone ?? null };
  });
}

/**
 * Applies a checked profile change under the row lock, worked out again from the row as it now
 * is: an email change still needs a password checked against the hash the row still has. A
 * change that changes nothing writes nothing (the version stays).
 */
export async function applyProfileChange(
  trx: Transaction<Database>,
  userId: string,
  ifMatch: string | undefined,
  change: CheckedProfileChange,
  work: { mail: MailSettings; context: EventContext },
): Promise<UserRow> {
  const current = await lockForWrite(() => findUserByIdForUpdate(trx, userId), ifMatch, 'user');
  const next = change.nextOf(current);
  if (next.name === current.name && next.email === current.email && next.phone === current.phone) return current;
  if (next.email !== current.email && !change.checked) throw passwordNeeded(current);
  // The password was checked against the hash read before; a password changed since voids that check (and a code spent since is refused).
  if (change.checked) await stillReauthenticated(trx, current, change.checked);
  return translatingEmailConflict(() => writeProfile(trx, current, next, work.mail, work.context));
}

const isActiveAdmin = (user: UserRow) => user.role === 'admin' && user.status === 'active';

/**
 * Applies an admin action that may take away an active admin: locks every active admin and
 * the target together, in id order, and refuses with `last_admin` when no other active
 * admin would remain.
 */
async function guardedAdminChange(
  trx: Transaction<Database>,
  targetId: string,
  ifMatch: string | undefined,
  stillActiveAdminAfter: (target: UserRow) => boolean,
  write: (trx: Transaction<Database>, target: UserRow) => Promise<UserRow>,
): Promise<UserRow> {
  const activeAdminIds = await lockActiveAdminsAndTarget(trx, targetId);
  // Already locked by the statement above; read in full under that lock.
  const target = await lockForWrite(() => findUserByIdForUpdate(trx, targetId), ifMatch, 'user');
  const losesAdmin = isActiveAdmin(target) && !stillActiveAdminAfter(target);
  if (losesAdmin && activeAdminIds.filter((id) => id !== target.id).length === 0) {
    throw new AppError('last_admin', 'This would leave the service without an active admin.');
  }
  return write(trx, target);
}

/** An admin action on one user, with its optional reason, recorded with the change. */
export interface AdminAction {
  targetId: string;
  ifMatch: string | undefined;
  reason: string | undefined;
  context: EventContext;
}

const withReason = (data: Record<string, unknown>, reason: string | undefined) => (reason ? { ...data, reason } : data);

export function changeRole(trx: Transaction<Database>, action: AdminAction, role: Role) {
  return guardedAdminChange(trx, action.targetId, action.ifMatch, () => role === 'admin', async (trx, target) => {
    const updated = await updateUser(trx, target.id, { role });
    await record(trx, userEvent('user.role_changed', updated, withReason(changedFields(target, updated, ['role']), action.reason)), action.context);
    return updated;
  });
}

export function changeStatus(trx: Transaction<Database>, action: AdminAction, status: UserStatus) {
  return guardedAdminChange(trx, action.targetId, action.ifMatch, () => status === 'active', async (trx, target) => {
    const suspends = status === 'suspended' && target.status !== 'suspended';
    // Suspension ends every session: reactivation does not bring old tokens back.
    if (suspends) await endEverySession(trx, target.id);
    const updated = await updateUser(trx, target.id, { status });
    const data = withReason({ ...changedFields(target, updated, ['status']), ...(suspends ? { sessions_ended: true } : {}) }, action.reason);
    await record(trx, userEvent('user.status_changed', updated, data), action.context);
    return updated;
  });
}

/** Soft delete: the row and its ledger stay; the email is free again and every token dies. */
export function deleteUser(trx: Transaction<Database>, action: AdminAction): Promise<void> {
  return removeUser(trx, action, () => undefined);
}

/**
 * The owner's deletion of their own account, as an admin's would be (the last-admin rule too),
 * once the password, checked before against `checked.checkedHash` (argon2 holds no transaction),
 * is still the account's, or the email code checked before is still live (and now spent).
 */
export function deleteOwnAccount(trx: Transaction<Database>, userId: string, ifMatch: string | undefined, checked: Reauthentication, context: EventContext): Promise<void> {
  return removeUser(trx, { targetId: userId, ifMatch, reason: undefined, context }, (target) => stillReauthenticated(trx, target, checked));
}

async function removeUser(trx: Transaction<Database>, action: AdminAction, check: (target: UserRow) => Promise<void> | void): Promise<void> {
  await guardedAdminChange(trx, action.targetId, action.ifMatch, () => false, async (trx, target) => {
    await check(target);
    const deleted = await updateUser(trx, target.id, { deleted_at: new Date() });
    await endEverySession(trx, target.id);
    await record(trx, userEvent('user.deleted', deleted, withReason({ before: profileOf(target), sessions_ended: true }, action.reason)), action.context);
    return deleted;
  });
}
