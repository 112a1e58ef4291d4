import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { Transaction } from 'kysely';
import type { Database } from '../db/tables.js';
import { record, type EventContext } from '../events/event-recorder.js';
import { AppError } from '../http/errors.js';
import { queueMail } from '../mail/mail-outbox.js';
import { recoveryCodeUsedMail, secondFactorsLockedMail } from '../mail/mail-templates.js';
import { takeChallenge, takeSignInChallenge, type ChallengeOwner } from './challenge-repository.js';
import { lockConfirmedFactors, markPasskeyUsed, markTotpStepUsed } from './factor-repository.js';
import { countWrongCode, lockFailureCount, resetWrongCodes, startLock } from './failure-lock-repository.js';
import type { MfaSettings } from './mfa-settings.js';
import { challengeOf, verifiedAssertion } from './passkeys.js';
import { countRecoveryCodesLeft, spendRecoveryCode } from './recovery-code-repository.js';
import { hashRecoveryCode } from './recovery-codes.js';
import { acceptedStep } from './totp.js';

export const invalidMfaCode = () => new AppError('invalid_mfa_code', 'The code, recovery code or passkey response does not verify.');

/** A check while the user's second-factor checks are locked (API.md section 17). */
export function secondFactorLocked(retryAfterSeconds: number): AppError {
  const seconds = String(Math.max(1, retryAfterSeconds));
  return new AppError('rate_limited', `Too many wrong second-factor codes: this account's second-factor checks are locked. Retry in ${seconds} s.`, undefined, { 'retry-after': seconds });
}

/** A first lock lasts 15 minutes, each further one twice the one before (a day after the last ended: 15 minutes again), 24 hours at most. */
const LOCK_DURATIONS = { firstSeconds: 15 * 60, maxSeconds: 24 * 60 * 60 };

/** What a user sends to prove the second factor: a TOTP code, a recovery code, or a passkey's assertion. */
export type SecondFactorProof = { code: string } | { recovery_code: string } | { webauthn: AuthenticationResponseJSON };

/** How the factor was proven, as RFC 8176 names it: `otp` (TOTP), `hwk` (passkey), or a recovery code. */
export type ProofMethod = 'otp' | 'hwk' | 'recovery_code';

/**
 * A check's outcome: the method that proved the factor (for a passkey, with whether the
 * authenticator verified the user), a wrong proof, or a check refused by the user's lock.
 */
export type SecondFactorOutcome = { method: ProofMethod; userVerified?: boolean } | { wrong: true } | { lockedForSeconds: number };

/**
 * Whom a passkey challenge was made for: a login (its mfa_token's row) or a session, or, for a
 * sign-in by passkey (API.md section 19), nobody: the passkey answering it names the user.
 */
export type AssertionOwner = ChallengeOwner | { signIn: true };

/** Spends the challenge an assertion names, made for this user and owner (or a sign-in's): true when it was live. */
function spendChallenge(trx: Transaction<Database>, challenge: string, userId: string, owner: AssertionOwner): Promise<boolean> {
  if ('signIn' in owner) return takeSignInChallenge(trx, challenge);
  return takeChallenge(trx, { value: challenge, purpose: 'authentication', userId, owner });
}

/**
 * Checks a proof of the user's second factor in the caller's transaction, which must commit
 * whatever the outcome: what a check spends stays spent when the proof is wrong (a passkey
 * challenge), what it marks stays marked when it is right (a TOTP step, a recovery code, a
 * passkey's counter), and a wrong proof stays counted.
 *
 * The user's count of wrong codes is locked first, so the user's checks take their turns on
 * every instance. While the user is locked nothing is checked (a passkey's challenge is still
 * spent). A right proof sets the count back to 0; the MFA_FAILURE_LIMIT-th wrong one in a row
 * locks the user's checks (15 minutes, doubling with each further lock up to 24 hours) and
 * queues the notice, once per lock. The factors checked are locked too, so two requests with
 * one code cannot both pass. A sign-in by passkey checks its assertion here too (owner
 * `{ signIn: true }`), so a passkey obeys the same rules whichever factor it stands for.
 */
export async function checkSecondFactor(
  trx: Transaction<Database>,
  settings: MfaSettings,
  user: { id: string; email: string },
  proof: SecondFactorProof,
  owner: AssertionOwner,
  context: EventContext,
): Promise<SecondFactorOutcome> {
  const count = await lockFailureCount(trx, user.id);
  if (count.seconds_locked > 0) {
    const challenge = 'webauthn' in proof ? challengeOf(proof.webauthn) : undefined;
    if (challenge) await spendChallenge(trx, challenge, user.id, owner);
    return { lockedForSeconds: count.seconds_locked };
  }
  const proven = await provenMethod(trx, settings, user, proof, owner, context);
  if (proven) {
    if (count.failures > 0) await resetWrongCodes(trx, user.id);
    return proven;
  }
  if ((await countWrongCode(trx, user.id)) >= settings.failureLimit) {
    const lockedUntil = await startLock(trx, user.id, LOCK_DURATIONS);
    await queueMail(trx, secondFactorsLockedMail(user.email, lockedUntil));
  }
  return { wrong: true };
}

/** The proof itself: the method when it verifies (for a passkey, with its UV flag), else undefined. */
async function provenMethod(
  trx: Transaction<Database>,
  settings: MfaSettings,
  user: { id: string; email: string },
  proof: SecondFactorProof,
  owner: AssertionOwner,
  context: EventContext,
): Promise<{ method: ProofMethod; userVerified?: boolean } | undefined> {
  if ('code' in proof) {
    for (const factor of await lockConfirmedFactors(trx, user.id, 'totp')) {
      const step = acceptedStep(settings.secrets.open(factor.totp_secret!), proof.code, factor.totp_last_step);
      if (step === undefined) continue;
      await markTotpStepUsed(trx, factor.id, step, false);
      return { method: 'otp' };
    }
    return undefined;
  }
  if ('recovery_code' in proof) {
    if (!(await spendRecoveryCode(trx, user.id, hashRecoveryCode(proof.recovery_code)))) return undefined;
    const left = await countRecoveryCodesLeft(trx, user.id);
    await record(trx, { type: 'user.recovery_code_used', subjectType: 'user', subjectId: user.id, data: { recovery_codes_left: left } }, context);
    await queueMail(trx, recoveryCodeUsedMail(user.email, new Date(), left));
    return { method: 'recovery_code' };
  }
  const challenge = challengeOf(proof.webauthn);
  // The challenge is spent first: good or bad, the assertion that named it has used it.
  if (!challenge || !(await spendChallenge(trx, challenge, user.id, owner))) return undefined;
  const passkey = (await lockConfirmedFactors(trx, user.id, 'webauthn')).find((factor) => factor.credential_id === proof.webauthn.id);
  if (!passkey) return undefined;
  const verified = await verifiedAssertion(settings.party, proof.webauthn, challenge, { ...passkey, credential_id: passkey.credential_id!, public_key: passkey.public_key! });
  if (verified === undefined) return undefined;
  await markPasskeyUsed(trx, passkey.id, verified.counter);
  return { method: 'hwk', userVerified: verified.userVerified };
}

/** The methods a user may log in with: those of its confirmed factors, and recovery codes. */
export function methodsOf(factorTypes: Iterable<string>, recoveryCodesLeft: number): ('totp' | 'webauthn' | 'recovery_code')[] {
  const types = new Set(factorTypes);
  return [...(types.has('totp') ? (['totp'] as const) : []), ...(types.has('webauthn') ? (['webauthn'] as const) : []), ...(recoveryCodesLeft > 0 ? (['recovery_code'] as const) : [])];
}
