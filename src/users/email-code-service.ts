import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Config } from '../config.js';
import type { Database, EmailCodeRow, UserRow } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { record, type EventContext } from '../events/event-recorder.js';
import type { MailLocale } from '../mail/mail-messages.js';
import { queueEmailCodeMail, type MailSettings } from './account-emails.js';
import { spendAccountTokens } from './account-token-repository.js';
import {
  countEmailCodeFailure,
  countRecentEmailCodes,
  findLiveEmailCode,
  type PendingSignup,
  lockAddressForCodes,
  lockEmailCode,
  spendCodesOfAddress,
  spendEmailCode,
} from './email-code-repository.js';
import { codeMatches, WRONG_TRIES_PER_CODE } from './email-code-proof.js';
import { findUserByEmail, findUserByIdForUpdate, updateUser } from './user-repository.js';
import { createUser } from './user-service.js';
import { endEverySession } from './credential-changes.js';

/** Codes an address gets in an hour, whatever the client addresses asking (as reset mails, API.md section 19). */
const CODES_AN_HOUR = 3;
/**
 * Whether an address no account has may get a code that creates one: `signupOpen` for any code
 * (ALLOW_REGISTRATION and EMAIL_CODE_SIGNUP), `registrationOpen` for a code the create-account
 * page asked for (ALLOW_REGISTRATION alone: that page is registration, its code the email's proof).
 */
export interface EmailCodeSettings {
  mail: MailSettings;
  signupOpen: boolean;
  registrationOpen: boolean;
}

/** The settings of email codes under the service's configuration, the same for the API and the hosted pages. */
export const emailCodeSettingsOf = (config: Pick<Config, 'allowRegistration' | 'emailCodeSignup'>, mail: MailSettings): EmailCodeSettings => ({
  mail,
  signupOpen: config.allowRegistration && config.emailCodeSignup,
  registrationOpen: config.allowRegistration,
});

/**
 * A hosted page's browser asking for a code: the hash of its CSRF token, and for the
 * create-account page the name and password it was given (API.md section 18).
 */
export interface PageBrowser {
  browserHash: string;
  signup?: { name: string; passwordHash: string };
}

/**
 * Sends a code to `email` when an account has it (suspended or not: its right code is then
 * answered 403), or when none has it and sign-up by code is open; at most 3 an hour per address,
 * beyond which nothing is sent and nothing replaced. A new code replaces the address's live one.
 * The route answers before this runs, so neither the reply nor its timing tells whether the
 * address has an account. The hosted pages ask for the mail in their language, and name their
 * `browser`: the create-account page's name and password wait on the code for that browser (for
 * an address no account has, ALLOW_REGISTRATION is enough), and a new code the same browser asks
 * for carries them on, so "send the code again" loses nothing.
 */
export async function requestEmailCode(db: Kysely<Database>, email: string, settings: EmailCodeSettings, language: MailLocale = 'en', browser?: PageBrowser): Promise<void> {
  await inTransaction(db, async (trx) => {
    await lockAddressForCodes(trx, email);
    const user = await findUserByEmail(trx, email);
    const signup = browser && (browser.signup ? { ...browser.signup, browserHash: browser.browserHash } : await signupCarriedOn(trx, email, browser.browserHash));
    if (!user && !(signup ? settings.registrationOpen : settings.signupOpen)) return;
    if ((await countRecentEmailCodes(trx, email, 3600)) >= CODES_AN_HOUR) return;
    await spendCodesOfAddress(trx, email);
    await queueEmailCodeMail(trx, settings.mail, { email: user?.email ?? email, userId: user?.id ?? null, signup }, language);
  });
}

/** The pending signup a code carries, when it carries one. */
const pendingSignupOf = (row: EmailCodeRow): PendingSignup | undefined =>
  row.signup_password_hash !== null && row.signup_browser_hash !== null
    ? { name: row.signup_name ?? '', passwordHash: row.signup_password_hash, browserHash: row.signup_browser_hash }
    : undefined;

/** The pending signup of the address's live code, when the same browser gave it. */
async function signupCarriedOn(trx: Transaction<Database>, email: string, browserHash: string): Promise<PendingSignup | undefined> {
  const live = await findLiveEmailCode(trx, email, WRONG_TRIES_PER_CODE);
  const signup = live && pendingSignupOf(live);
  return signup?.browserHash === browserHash ? signup : undefined;
}

/** What a code proves: the account it signs in to (made now, for a sign-up), or nothing. */
export type CodeProof = { user: UserRow; created: boolean } | { wrong: true };

/**
 * Spends the live code of `email` if `code` is it, in the caller's transaction, and returns the
 * account it proves: the one that has the address (whose email it verifies), or a new one when
 * none has it and sign-up is open (role `user`, verified, no password, named by the address's
 * local part). A code posted by the hosted page of the browser that asked for it on the
 * create-account page (`browserHash`) applies that page's name and password: to the account it
 * makes (ALLOW_REGISTRATION is then enough), or to an account made before the address was ever
 * proved (someone may have registered the address to wait for its owner: the owner's password
 * replaces theirs and every session of it ends). A wrong code is counted on the code (the 5th
 * kills it); the caller commits that before it answers. Locks in the order every credential
 * change takes them (the user's row, then its codes), so two tries of one code take turns and the
 * second finds it spent.
 */
export async function redeemEmailCode(
  trx: Transaction<Database>,
  email: string,
  code: string,
  settings: EmailCodeSettings,
  context: EventContext,
  browserHash?: string,
): Promise<CodeProof> {
  const live = await findLiveEmailCode(trx, email, WRONG_TRIES_PER_CODE);
  if (!live) return { wrong: true };
  const holder = await findUserByEmail(trx, email);
  const user = holder && (await findUserByIdForUpdate(trx, holder.id));
  const locked = await lockEmailCode(trx, live.id);
  if (!locked || locked.used_at || locked.expires_at.getTime() <= Date.now() || locked.failures >= WRONG_TRIES_PER_CODE) return { wrong: true };
  if (!codeMatches(locked, code)) {
    await countEmailCodeFailure(trx, locked.id);
    return { wrong: true };
  }
  // A code made for an account proves nothing for another that has the address since (an email change or a deletion spends it anyway).
  if (locked.user_id !== null && locked.user_id !== user?.id) return { wrong: true };
  const pending = pendingSignupOf(locked);
  const signup = pending && browserHash !== undefined && pending.browserHash === browserHash ? pending : undefined;
  await spendEmailCode(trx, locked.id);
  if (user) {
    const owned = signup && !user.email_verified && user.status === 'active' ? await takeOverUnprovenAccount(trx, user, signup.passwordHash, context) : user;
    return { user: await verifyAddress(trx, owned, context), created: false };
  }
  if (!(signup ? settings.registrationOpen : settings.signupOpen)) return { wrong: true };
  const name = signup?.name ?? ((locked.email.split('@')[0] ?? '').slice(0, 100).trim() || 'Customer');
  // The new user is the actor of its own registration, as at POST /api/auth/register.
  const id = randomUUID();
  const created = await createUser(
    trx,
    // The create-account page's account registers as POST /api/auth/register's does (no `method`), its email proved by the code.
    { id, email: locked.email, passwordHash: signup?.passwordHash ?? null, name, role: 'user', emailVerified: true, ...(signup ? {} : { method: 'email_code' as const }) },
    { ...context, actorId: id, actorType: 'user' },
    settings.mail,
  );
  return { user: created, created: true };
}

/**
 * The address's owner, proving it for the first time on the create-account page, takes over the
 * account someone made for it before: the page's password replaces the one set without proof, and
 * every session of the account ends (with its logins in flight), as a password change does.
 */
async function takeOverUnprovenAccount(trx: Transaction<Database>, user: UserRow, passwordHash: string, context: EventContext): Promise<UserRow> {
  await endEverySession(trx, user.id);
  const updated = await updateUser(trx, user.id, { password_hash: passwordHash });
  await record(trx, { type: 'user.password_changed', subjectType: 'user', subjectId: user.id, data: { sessions_ended: true } }, { ...context, actorId: user.id, actorType: 'user' });
  return updated;
}

/** A right code proves the address: an unverified one becomes verified, as its link would make it. */
async function verifyAddress(trx: Transaction<Database>, user: UserRow, context: EventContext): Promise<UserRow> {
  if (user.email_verified) return user;
  await spendAccountTokens(trx, user.id, 'email_verification');
  const updated = await updateUser(trx, user.id, { email_verified: true });
  await record(
    trx,
    { type: 'user.email_verified', subjectType: 'user', subjectId: user.id, data: { before: { email_verified: false }, after: { email_verified: true }, email: user.email } },
    { ...context, actorId: user.id },
  );
  return updated;
}

