import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Config } from '../config.js';
import type { Database, UserRow } from '../db/tables.js';
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

export type { PendingSignup };

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
 * Sends a code to `email` when an account has it (suspended or not: its right code is then
 * answered 403), or when none has it and sign-up by code is open; at most 3 an hour per address,
 * beyond which nothing is sent and nothing replaced. A new code replaces the address's live one.
 * The route answers before this runs, so neither the reply nor its timing tells whether the
 * address has an account. The hosted pages ask for the mail in their language; their
 * create-account page sends `signup`, the name and password of the account the code makes when
 * no account has the address (when one has it, the code signs in to that one, and they are
 * dropped: the page says so to everyone alike).
 */
export async function requestEmailCode(db: Kysely<Database>, email: string, settings: EmailCodeSettings, language: MailLocale = 'en', signup?: PendingSignup): Promise<void> {
  await inTransaction(db, async (trx) => {
    await lockAddressForCodes(trx, email);
    const user = await findUserByEmail(trx, email);
    if (!user && !(signup ? settings.registrationOpen : settings.signupOpen)) return;
    if ((await countRecentEmailCodes(trx, email, 3600)) >= CODES_AN_HOUR) return;
    await spendCodesOfAddress(trx, email);
    await queueEmailCodeMail(trx, settings.mail, { email: user?.email ?? email, userId: user?.id ?? null, signup: user ? undefined : signup }, language);
  });
}

/** What a code proves: the account it signs in to (made now, for a sign-up), or nothing. */
export type CodeProof = { user: UserRow; created: boolean } | { wrong: true };

/**
 * Spends the live code of `email` if `code` is it, in the caller's transaction, and returns the
 * account it proves: the one that has the address (whose email it verifies), or a new one when
 * none has it and sign-up is open (role `user`, verified, no password, named by the address's
 * local part). A wrong code is counted on the code (the 5th kills it); the caller commits that
 * before it answers. Locks in the order every credential change takes them (the user's row, then
 * its codes), so two tries of one code take turns and the second finds it spent.
 */
export async function redeemEmailCode(trx: Transaction<Database>, email: string, code: string, settings: EmailCodeSettings, context: EventContext): Promise<CodeProof> {
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
  await spendEmailCode(trx, locked.id);
  if (user) return { user: await verifyAddress(trx, user, context), created: false };
  const pageSignup = locked.signup_password_hash !== null;
  if (!(pageSignup ? settings.registrationOpen : settings.signupOpen)) return { wrong: true };
  const name = locked.signup_name ?? ((locked.email.split('@')[0] ?? '').slice(0, 100).trim() || 'Customer');
  // The new user is the actor of its own registration, as at POST /api/auth/register.
  const id = randomUUID();
  const created = await createUser(
    trx,
    // The create-account page's account registers as POST /api/auth/register's does (no `method`), its email proved by the code.
    { id, email: locked.email, passwordHash: locked.signup_password_hash, name, role: 'user', emailVerified: true, ...(pageSignup ? {} : { method: 'email_code' as const }) },
    { ...context, actorId: id, actorType: 'user' },
    settings.mail,
  );
  return { user: created, created: true };
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

