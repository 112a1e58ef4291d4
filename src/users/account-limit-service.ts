import type { Kysely, Transaction } from 'kysely';
import type { AccountAttemptKind, Database } from '../db/tables.js';
import { AppError } from '../http/errors.js';
import { verifyPassword } from '../sessions/passwords.js';
import { countRecentAttempts, deleteAccountAttempt, deleteAccountAttempts, insertAccountAttempt, type AttemptWindow } from './account-attempt-repository.js';

const MINUTE = 60;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const EMAIL_CHANGES_A_DAY = 5;
const RESENDS_A_DAY = 5;

/**
 * Limits per account, whatever addresses ask (API.md sections 10 and 17), counted in the database
 * so every instance sees the same counts: failed logins an hour (wrong passwords re-checked with
 * an access token and wrong second-factor codes among them), email changes a day, verification
 * resends a minute and a day. (Password-reset mails are counted by their tokens, see
 * account-service.ts.)
 */
function rateLimited(detail: string, retryAfterSeconds: number): AppError {
  const seconds = String(Math.max(1, Math.ceil(retryAfterSeconds)));
  return new AppError('rate_limited', `${detail} Retry in ${seconds} s.`, undefined, { 'retry-after': seconds });
}

/** Seconds until the oldest attempt of a full window leaves it. */
const untilOldestLeaves = (window: AttemptWindow, windowSeconds: number) => windowSeconds - (window.oldestAgeSeconds ?? 0);

/**
 * Counts a login about to check the password of `email` as a failure until it succeeds, and
 * refuses it (429) once the account has LOGIN_ACCOUNT_FAILURE_LIMIT failures in the last hour.
 * The attempt is written before it is counted, so logins racing each other can only be refused
 * too early, never let through beyond the limit. Returns the attempt, for `loginSucceeded`.
 */
export async function beginLoginAttempt(db: Kysely<Database>, email: string, limit: number): Promise<string> {
  const subject = email.toLowerCase();
  const attempt = await insertAccountAttempt(db, 'login_failure', subject);
  const window = await countRecentAttempts(db, 'login_failure', subject, HOUR);
  if (window.count > limit) {
    await deleteAccountAttempt(db, attempt);
    throw rateLimited('Too many failed logins for this account.', untilOldestLeaves(window, HOUR));
  }
  return attempt;
}

/** The password (or second factor) was right: the attempt was no failure. */
export function loginSucceeded(db: Kysely<Database>, attempt: string): Promise<void> {
  return deleteAccountAttempt(db, attempt);
}

/**
 * Re-authentication counts like a login (API.md section 17): the password a signed-in user sends
 * to change the password or the email, or to delete the account, is checked as a login checks
 * it. The attempt counts toward LOGIN_ACCOUNT_FAILURE_LIMIT before the password is looked at, so
 * past the limit the right password is refused too (429); a wrong password stays counted as a
 * failed login. (The address's LOGIN_RATE_LIMIT is the route's, as for a login.)
 */
export async function verifyPasswordLikeLogin(db: Kysely<Database>, user: { email: string; password_hash: string | null }, password: string, limit: number): Promise<boolean> {
  const attempt = await beginLoginAttempt(db, user.email, limit);
  if (!(await verifyPassword(user.password_hash, password))) return false;
  await loginSucceeded(db, attempt);
  return true;
}

/** A completed password reset starts the account's failure count afresh. */
export function clearLoginFailures(trx: Transaction<Database>, email: string): Promise<void> {
  return deleteAccountAttempts(trx, 'login_failure', email.toLowerCase());
}

async function countWithin(trx: Transaction<Database>, kind: AccountAttemptKind, userId: string, rules: { perDay: number; minuteApart?: boolean; what: string }): Promise<void> {
  const day = await countRecentAttempts(trx, kind, userId, DAY);
  if (rules.minuteApart && day.newestAgeSeconds !== null && day.newestAgeSeconds < MINUTE) {
    throw rateLimited(`At most one ${rules.what} a minute.`, MINUTE - day.newestAgeSeconds);
  }
  if (day.count >= rules.perDay) throw rateLimited(`At most ${rules.perDay} ${rules.what}s in 24 hours.`, untilOldestLeaves(day, DAY));
  await insertAccountAttempt(trx, kind, userId);
}

/** An email change about to be written, under the user's row lock: at most 5 in 24 hours. */
export function countEmailChange(trx: Transaction<Database>, userId: string): Promise<void> {
  return countWithin(trx, 'email_change', userId, { perDay: EMAIL_CHANGES_A_DAY, what: 'email change' });
}

/** A verification resend, under the user's row lock: at most one a minute and 5 in 24 hours. */
export function countVerificationResend(trx: Transaction<Database>, userId: string): Promise<void> {
  return countWithin(trx, 'verification_resend', userId, { perDay: RESENDS_A_DAY, minuteApart: true, what: 'verification email' });
}
