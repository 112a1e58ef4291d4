import type { Kysely, Transaction } from 'kysely';
import type { Database, UserRow } from '../db/tables.js';
import { record, type EventContext } from '../events/event-recorder.js';
import { accountSuspended, notFound, validationFailed } from '../http/errors.js';
import { hashPassword } from '../sessions/passwords.js';
import type { TokenIssuer } from '../sessions/token-issuer.js';
import { startSession, type ClientDetails, type TokenPair } from '../sessions/token-pairs.js';
import { endEverySession } from './credential-changes.js';
import { findUserByIdForUpdate, updateUser } from './user-repository.js';
import { spendCheckedEmailCode } from './email-code-proof.js';
import { proofNeeded, reauthenticate, wrongPassword, type Reauthentication } from './user-service.js';

/** A password change checked and hashed (argon2, outside any transaction), to apply. */
export interface PreparedPasswordChange {
  userId: string;
  /** The current password's hash it was checked against, or the email code of an account without a password. */
  checked: Reauthentication;
  newHash: string;
}

/**
 * The current password checked against the user as read (counted like a login, see
 * reauthenticate), or for an account without a password the email code it sent (the change then
 * sets its first password), and the new one hashed.
 */
export async function preparePasswordChange(
  db: Kysely<Database>,
  user: UserRow,
  passwords: { current: string | undefined; emailCode: string | undefined; next: string },
  accountFailureLimit: number,
): Promise<PreparedPasswordChange> {
  const checked = await reauthenticate(db, user, { password: passwords.current, emailCode: passwords.emailCode, passwordField: 'current_password' }, accountFailureLimit);
  if (!checked) throw proofNeeded(user, 'current_password', 'to change the password');
  if (passwords.next === passwords.current) throw validationFailed('/new_password', 'must differ from the current password');
  return { userId: user.id, checked, newHash: await hashPassword(passwords.next) };
}

/**
 * Changes the password: every session of the user ends (logins in flight included, see
 * credential-changes.ts), reset links stop working, and a fresh pair in a new session is
 * returned, the one session the change leaves.
 */
export async function applyPasswordChange(
  trx: Transaction<Database>,
  change: PreparedPasswordChange,
  issuer: TokenIssuer,
  context: EventContext,
  client: ClientDetails,
): Promise<TokenPair> {
  const locked = await findUserByIdForUpdate(trx, change.userId);
  if (!locked) throw notFound('user');
  // The user may have been suspended, or the password changed, while the hashing ran.
  if (locked.status !== 'active') throw accountSuspended();
  if (locked.password_hash !== change.checked.checkedHash) throw wrongPassword();
  if (change.checked.codeId) await spendCheckedEmailCode(trx, change.checked.codeId);
  await updateUser(trx, change.userId, { password_hash: change.newHash });
  await endEverySession(trx, change.userId);
  await record(trx, { type: 'user.password_changed', subjectType: 'user', subjectId: change.userId, data: { sessions_ended: true } }, context);
  return startSession(trx, issuer, change.userId, client);
}
