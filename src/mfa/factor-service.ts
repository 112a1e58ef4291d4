import { randomUUID } from 'node:crypto';
import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import type { Transaction } from 'kysely';
import type { Database, MfaFactorRow, UserRow } from '../db/tables.js';
import { record, type EventContext } from '../events/event-recorder.js';
import { AppError, forbidden, notFound } from '../http/errors.js';
import { queueMail } from '../mail/mail-outbox.js';
import { factorAddedMail, factorRemovedMail, secondFactorsResetMail } from '../mail/mail-templates.js';
import { markSecondFactorVerified } from '../sessions/session-service.js';
import { endEverySession, endOtherSessions } from '../users/credential-changes.js';
import { findUserByIdForUpdate } from '../users/user-service.js';
import { insertChallenge, takeChallenge } from './challenge-repository.js';
import { deleteFailureCount } from './failure-lock-repository.js';
import { countConfirmedFactors, deleteFactor, deleteFactorsOfUser, factorsOfUser, insertFactor, lockFactor, markTotpStepUsed, passkeyIsRegistered } from './factor-repository.js';
import type { MfaSettings } from './mfa-settings.js';
import { CHALLENGE_TTL_SECONDS, challengeOf, registrationOptions, verifiedRegistration } from './passkeys.js';
import { deleteRecoveryCodes, replaceRecoveryCodes } from './recovery-code-repository.js';
import { hashRecoveryCode, newRecoveryCode, RECOVERY_CODE_COUNT } from './recovery-codes.js';
import { invalidMfaCode } from './second-factor-check.js';
import { acceptedStep, newTotpSecret, otpauthUrl } from './totp.js';

/** A user keeps at most this many factors (unconfirmed ones included): enough for every device, not a store. */
export const MAX_FACTORS = 20;

/** Who changes their own factors, and in which session. */
export interface FactorOwner {
  userId: string;
  sessionId: string;
}

/**
 * Every change of a user's factors holds the user's row lock first, so two changes of one user
 * (two confirmations, a removal and an admin reset) happen one after the other: only one of two
 * factors confirmed at once is the first, and makes recovery codes.
 */
async function lockOwner(trx: Transaction<Database>, userId: string): Promise<UserRow> {
  const user = await findUserByIdForUpdate(trx, userId);
  if (!user) throw notFound('user');
  return user;
}

async function assertRoomForFactor(trx: Transaction<Database>, userId: string): Promise<void> {
  const factors = await factorsOfUser(trx, userId, { unconfirmedToo: true });
  if (factors.length >= MAX_FACTORS) throw new AppError('too_many_factors', `A user has at most ${MAX_FACTORS} second factors: remove one first.`);
}

/** A new TOTP factor, unconfirmed: its secret (shown once) and the URL an authenticator app reads. */
export async function startTotpEnrolment(trx: Transaction<Database>, settings: MfaSettings, owner: FactorOwner, name: string | undefined) {
  const user = await lockOwner(trx, owner.userId);
  await assertRoomForFactor(trx, user.id);
  const secret = newTotpSecret();
  const factor = await insertFactor(trx, {
    id: randomUUID(),
    user_id: user.id,
    type: 'totp',
    name: name ?? 'Authenticator app',
    totp_secret: settings.secrets.seal(secret),
    totp_last_step: null,
    credential_id: null,
    public_key: null,
    sign_count: 0,
    transports: null,
    confirmed_at: null,
    created_at: new Date(),
  });
  return { factor, secret, otpauthUrl: otpauthUrl(settings.party.name, user.email, secret) };
}

/**
 * A factor just confirmed: the event and the notice go out, and the user's first factor brings
 * 10 recovery codes (returned, shown once) and counts as the session's second factor verified
 * now. A later factor leaves the session's verification as it was: adding one needed step-up
 * (API.md section 17), and a factor the caller just made proves nothing about the owner's.
 */
async function factorConfirmed(trx: Transaction<Database>, user: UserRow, factor: MfaFactorRow, sessionId: string, context: EventContext): Promise<string[] | undefined> {
  const first = (await countConfirmedFactors(trx, user.id)) === 1;
  if (first) await markSecondFactorVerified(trx, sessionId);
  await record(trx, { type: 'user.mfa_factor_added', subjectType: 'user', subjectId: user.id, data: { factor_id: factor.id, type: factor.type, name: factor.name } }, context);
  await queueMail(trx, factorAddedMail(user.email, factor, new Date()));
  return first ? newRecoveryCodeSet(trx, user.id, context) : undefined;
}

/** 10 new recovery codes; the old set is void. Returns the codes, which are kept only as hashes. */
async function newRecoveryCodeSet(trx: Transaction<Database>, userId: string, context: EventContext): Promise<string[]> {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  await replaceRecoveryCodes(trx, userId, codes.map(hashRecoveryCode));
  await record(trx, { type: 'user.recovery_codes_generated', subjectType: 'user', subjectId: userId, data: { count: codes.length } }, context);
  return codes;
}

/** Confirms the caller's unconfirmed TOTP factor with a code of it (that code is then spent). 404 for any other factor. */
export async function confirmTotp(trx: Transaction<Database>, settings: MfaSettings, owner: FactorOwner, factorId: string, code: string, context: EventContext) {
  const user = await lockOwner(trx, owner.userId);
  const factor = await lockFactor(trx, user.id, factorId);
  if (!factor || factor.type !== 'totp' || factor.confirmed_at) throw notFound('unconfirmed TOTP factor');
  const step = acceptedStep(settings.secrets.open(factor.totp_secret!), code, factor.totp_last_step);
  if (step === undefined) throw invalidMfaCode();
  const confirmed = await markTotpStepUsed(trx, factor.id, step, true);
  return { factor: confirmed, recoveryCodes: await factorConfirmed(trx, user, confirmed, owner.sessionId, context) };
}

/** Options for a new passkey; the challenge is kept, tied to the session, for 5 minutes. */
export async function startPasskeyRegistration(trx: Transaction<Database>, settings: MfaSettings, owner: FactorOwner) {
  const user = await lockOwner(trx, owner.userId);
  await assertRoomForFactor(trx, user.id);
  const passkeys = await factorsOfUser(trx, user.id, { type: 'webauthn' });
  const options = await registrationOptions(settings.party, user, passkeys.map((passkey) => ({ credential_id: passkey.credential_id!, transports: passkey.transports })));
  await insertChallenge(trx, { value: options.challenge, purpose: 'registration', userId: user.id, owner: { sessionId: owner.sessionId }, ttlSeconds: CHALLENGE_TTL_SECONDS });
  return options;
}

/**
 * A passkey registered with a challenge of this session, which the response spends whether or
 * not it verifies (the caller's transaction must commit either way). Undefined when it does not
 * verify, or the passkey is registered already.
 */
export async function registerPasskey(trx: Transaction<Database>, settings: MfaSettings, owner: FactorOwner, name: string | undefined, response: RegistrationResponseJSON, context: EventContext) {
  const user = await lockOwner(trx, owner.userId);
  const challenge = challengeOf(response);
  if (!challenge || !(await takeChallenge(trx, { value: challenge, purpose: 'registration', userId: user.id, owner: { sessionId: owner.sessionId } }))) return undefined;
  const passkey = await verifiedRegistration(settings.party, response, challenge);
  if (!passkey) return undefined;
  await assertRoomForFactor(trx, user.id);
  if (await passkeyIsRegistered(trx, passkey.credential_id)) return undefined;
  const now = new Date();
  const factor = await insertFactor(trx, {
    id: randomUUID(),
    user_id: user.id,
    type: 'webauthn',
    name: name ?? 'Passkey',
    totp_secret: null,
    totp_last_step: null,
    ...passkey,
    confirmed_at: now,
    created_at: now,
  });
  return { factor, recoveryCodes: await factorConfirmed(trx, user, factor, owner.sessionId, context) };
}

/**
 * Removes one of the caller's factors. The last one of a user whose role requires a factor
 * stays (409 `last_factor`); with the last one go the recovery codes. Removing a confirmed
 * factor is a change of credentials: the user's other sessions end, and so does any login
 * waiting for its second step.
 */
export async function removeFactor(trx: Transaction<Database>, settings: MfaSettings, owner: FactorOwner, factorId: string, context: EventContext): Promise<void> {
  const user = await lockOwner(trx, owner.userId);
  const factor = await lockFactor(trx, user.id, factorId);
  if (!factor) throw notFound('factor');
  if (!factor.confirmed_at) return deleteFactor(trx, factor.id);
  const confirmed = await countConfirmedFactors(trx, user.id);
  if (confirmed === 1 && settings.requiredRoles.includes(user.role)) {
    throw new AppError('last_factor', `The role ${user.role} requires a second factor: add another before removing this one.`);
  }
  await deleteFactor(trx, factor.id);
  if (confirmed === 1) await deleteRecoveryCodes(trx, user.id);
  const ended = await endOtherSessions(trx, user.id, owner.sessionId);
  await record(trx, { type: 'user.mfa_factor_removed', subjectType: 'user', subjectId: user.id, data: { factor_id: factor.id, type: factor.type, name: factor.name, session_ids_ended: ended } }, context);
  await queueMail(trx, factorRemovedMail(user.email, factor, new Date()));
}

/** A new set of 10 recovery codes for a user with a factor; the old set is void. */
export async function regenerateRecoveryCodes(trx: Transaction<Database>, owner: FactorOwner, context: EventContext): Promise<string[]> {
  const user = await lockOwner(trx, owner.userId);
  if ((await countConfirmedFactors(trx, user.id)) === 0) throw notFound('second factor (recovery codes come with the first one)');
  return newRecoveryCodeSet(trx, user.id, context);
}

/**
 * An admin's reset of another user's second factors (a lost phone): every factor and recovery
 * code goes, every session ends (logins waiting for their second step too), and the user is told
 * by email, also when there was nothing to remove. An admin resets their own factors one by one
 * under /api/auth/mfa instead, with a fresh second factor.
 */
export async function resetFactors(trx: Transaction<Database>, targetId: string, adminId: string, context: EventContext): Promise<void> {
  if (targetId === adminId) throw forbidden('Remove your own second factors under /api/auth/mfa/factors, not by a reset.');
  const user = await lockOwner(trx, targetId);
  // The factors the lock guarded go: the user's new ones start unlocked. The count's row first,
  // as every check takes it before the factors, so a check at the same moment cannot deadlock.
  await deleteFailureCount(trx, user.id);
  const removed = await deleteFactorsOfUser(trx, user.id);
  await deleteRecoveryCodes(trx, user.id);
  const ended = await endEverySession(trx, user.id);
  const factors = removed.filter((factor) => factor.confirmed_at).map((factor) => ({ id: factor.id, type: factor.type, name: factor.name }));
  await record(trx, { type: 'user.mfa_reset', subjectType: 'user', subjectId: user.id, data: { factors_removed: factors, session_ids_ended: ended } }, context);
  await queueMail(trx, secondFactorsResetMail(user.email, new Date()));
}
