import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import type { EventContext } from '../events/event-recorder.js';
import { markSecondFactorVerified } from '../sessions/session-service.js';
import { beginLoginAttempt, loginSucceeded } from '../users/account-limit-service.js';
import type { FactorOwner } from './factor-service.js';
import type { MfaSettings } from './mfa-settings.js';
import { checkSecondFactor, invalidMfaCode, secondFactorLocked, type SecondFactorProof } from './second-factor-check.js';

/**
 * Step-up: the caller's session proves its second factor again, and counts as verified from now
 * for MFA_STEP_UP_MAX_AGE seconds; other sessions of the user are not touched. A wrong code counts
 * toward the account's failed logins, as at login, and toward the user's second-factor lock, so a
 * stolen access token cannot try codes without limit; while the lock holds the request is 429
 * (not counted as a failed login). What the check spends, marks or counts is committed whatever
 * the outcome.
 */
export async function verifyStepUp(
  db: Kysely<Database>,
  settings: MfaSettings,
  owner: FactorOwner & { email: string },
  proof: SecondFactorProof,
  limits: { accountFailureLimit: number },
  context: EventContext,
): Promise<Date> {
  const attempt = await beginLoginAttempt(db, owner.email, limits.accountFailureLimit);
  const outcome = await inTransaction(db, async (trx) => {
    const checked = await checkSecondFactor(trx, settings, { id: owner.userId, email: owner.email }, proof, { sessionId: owner.sessionId }, context);
    return 'method' in checked ? { verifiedAt: await markSecondFactorVerified(trx, owner.sessionId) } : checked;
  });
  if ('wrong' in outcome) throw invalidMfaCode();
  await loginSucceeded(db, attempt);
  if ('lockedForSeconds' in outcome) throw secondFactorLocked(outcome.lockedForSeconds);
  return outcome.verifiedAt;
}
