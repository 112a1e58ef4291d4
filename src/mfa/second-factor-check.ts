import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { Transaction } from 'kysely';
import type { Database } from '../db/tables.js';
import { record, type EventContext } from '../events/event-recorder.js';
import { AppError } from '../http/errors.js';
import { queueMail } from '../mail/mail-outbox.js';
import { recoveryCodeUsedMail, secondFactorsLockedMail } from '../mail/mail-templates.js';
import { takeChallenge, type ChallengeOwner } from './challenge-repository.js';
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

/** A check's outcome: the method that proved the factor, a wrong proof, or a check refused by the user's lock. */
export type SecondFactorOutcome = { method: ProofMethod } | { wrong: true } | { lockedForSeconds: number };

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
 * one code cannot both pass.
 */
export async function checkSecondFactor(
  trx: Transaction<Database>,
  settings: MfaSettings,
  user: { id: string; email: string },
  proof: SecondFactorProof,
  owner: ChallengeOwner,
  context: EventContext,
): Promise<SecondFactorOutcome> {
  const count = await lockFailureCount(trx, user.id);
  if (count.seconds_locked > 0) {
    const challenge = 'webauthn' in proof ? challengeOf(proof.webauthn) : undefined;
    if (challenge) await takeChallenge(trx, { value: challenge, purpose: 'authentication', userId: user.id, owner });
    return { lockedForSeconds: count.seconds_locked };
  }
  const method = await provenMethod(trx, settings, user, proof, owner, context);
  if (method) {
    if (count.failures > 0) await resetWrongCodes(trx, user.id);
    return { method };
  }
  if ((await countWrongCode(trx, user.id)) >= settings.failureLimit) {
    const lockedUntil = await startLock(trx, user.id, LOCK_DURATIONS);
    await queueMail(trx, secondFactorsLockedMail(user.email, lockedUntil));
  }
  return { wrong: true };
}

/** The proof itself: the method when it verifies, else undefined. */
async function provenMethod(
  trx: Transaction<Database>,
  settings: MfaSettings,
  user: { id: string; email: string },
  proof: SecondFactorProof,
  owner: ChallengeOwner,
  context: EventContext,
): Promise<ProofMethod | undefined> {
  if ('code' in proof) {
    for (const factor of await lockConfirmedFactors(trx, user.id, 'totp')) {
      const step = acceptedStep(settings.secrets.open(factor.totp_secret!), proof.code, factor.totp_last_step);
      if (step === undefined) continue;
      await markTotpStepUsed(trx, factor.id, step, false);
      return 'otp';
    }
    return undefined;
  }
  if ('recovery_code' in proof) {
    if (!(await spendRecoveryCode(trx, user.id, hashRecoveryCode(proof.recovery_code)))) return undefined;
    const left = await countRecoveryCodesLeft(trx, user.id);
    await record(trx, { type: 'user.recovery_code_used', subjectType: 'user', subjectId: user.id, data: { recovery_codes_left: left } }, context);
    await queueMail(trx, recoveryCodeUsedMail(user.email, new Date(), left));
    return 'recovery_code';
  }
  const challenge = challengeOf(proof.webauthn);
  // The challenge is spent first: good or bad, the assertion that named it has used it.
  if (!challenge || !(await takeChallenge(trx, { value: challenge, purpose: 'authentication', userId: user.id, owner }))) return undefined;
  const passkey = (await lockConfirmedFactors(trx, user.id, 'webauthn')).find((factor) => factor.credential_id === proof.webauthn.id);
  if (!passkey) return undefined;
  const counter = await verifiedAssertion(settings.party, proof.webauthn, challenge, { ...passkey, credential_id: passkey.credential_id!, public_key: passkey.public_key! });
  if (counter === undefined) return undefined;
  await markPasskeyUsed(trx, passkey.id, counter);
  return 'hwk';
}

/** The methods a user may log in with: those of its confirmed factors, and recovery codes. */
export function methodsOf(factorTypes: Iterable<string>, recoveryCodesLeft: number): ('totp' | 'webauthn' | 'recovery_code')[] {
  const types = new Set(factorTypes);
  return [...(types.has('totp') ? (['totp'] as const) : []), ...(types.has('webauthn') ? (['webauthn'] as const) : []), ...(recoveryCodesLeft > 0 ? (['recovery_code'] as const) : [])];
}
