import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/tables.js';
import { deleteFactorsOfUser, factorsOfUser } from './factor-repository.js';
import { deleteFailureCount } from './failure-lock-repository.js';
import { toFactorResponse } from './mfa-response.js';
import { deleteRecoveryCodes } from './recovery-code-repository.js';

/** The user's confirmed factors as a data export shows them: names and times, never a secret or key. */
export async function exportedFactors(db: Kysely<Database>, userId: string) {
  return (await factorsOfUser(db, userId)).map(toFactorResponse);
}

/**
 * The second-factor area's part of an erasure: every factor (confirmed or not), recovery code,
 * pending login token, passkey challenge and count of wrong codes of the user goes.
 */
export async function eraseSecondFactors(trx: Transaction<Database>, userId: string): Promise<void> {
  // The count's row first, as every check takes it before the factors: no deadlock with a check.
  await deleteFailureCount(trx, userId);
  await deleteFactorsOfUser(trx, userId);
  await deleteRecoveryCodes(trx, userId);
  await trx.deleteFrom('mfa_login_tokens').where('user_id', '=', userId).execute();
  await trx.deleteFrom('webauthn_challenges').where('user_id', '=', userId).execute();
}
