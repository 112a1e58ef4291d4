import type { Kysely } from 'kysely';
import type { Database, SessionRow } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import type { EventContext } from '../events/event-recorder.js';
import { accountSuspended } from '../http/errors.js';
import { secondStepOf, type SecondStep } from '../mfa/mfa-login-service.js';
import type { TokenIssuer } from '../sessions/token-issuer.js';
import { EMAIL_CODE_ONLY, openSession, type ClientDetails, type SessionOptions, type TokenPair } from '../sessions/token-pairs.js';
import { beginLoginAttempt, loginSucceeded } from '../users/account-limit-service.js';
import { invalidEmailCode } from '../users/email-code-proof.js';
import { redeemEmailCode, type EmailCodeSettings } from '../users/email-code-service.js';

type Outcome = { pair: TokenPair; session: SessionRow } | { secondStep: SecondStep } | { refusal: 'code' | 'suspended' };

/**
 * A login by email code (API.md section 19), counted as a password login is: toward the
 * account's failed logins until the code proves right (a wrong, unknown, expired or spent code
 * stays counted, and past LOGIN_ACCOUNT_FAILURE_LIMIT every try is 429). The code is taken, the
 * account found or made, and the session (or the second step, for a user with a factor) started
 * in one transaction under the user's row lock, so a password change, email change, suspension
 * or deletion either spent the code before or ends the session after. A wrong code's count on
 * the code commits before the refusal; a suspended user's right code is spent and answered 403.
 * The hosted pages pass the options of their sign-in session (API.md section 18).
 */
export async function logInWithEmailCode(
  db: Kysely<Database>,
  issuer: TokenIssuer,
  credentials: { email: string; code: string; browserHash?: string },
  client: ClientDetails,
  settings: EmailCodeSettings & { accountFailureLimit: number },
  context: EventContext,
  sessionOptions: SessionOptions = {},
): Promise<{ pair: TokenPair; session: SessionRow } | { secondStep: SecondStep }> {
  const attempt = await beginLoginAttempt(db, credentials.email, settings.accountFailureLimit);
  const outcome = await inTransaction(db, async (trx): Promise<Outcome> => {
    const proof = await redeemEmailCode(trx, credentials.email, credentials.code, settings, context, credentials.browserHash);
    if ('wrong' in proof) return { refusal: 'code' };
    const { user } = proof;
    if (user.status !== 'active') return { refusal: 'suspended' };
    const secondStep = await secondStepOf(trx, user, 'email');
    return secondStep ? { secondStep } : await openSession(trx, issuer, user.id, client, EMAIL_CODE_ONLY, undefined, sessionOptions);
  });
  if ('refusal' in outcome && outcome.refusal === 'code') throw invalidEmailCode();
  await loginSucceeded(db, attempt);
  if ('refusal' in outcome) throw accountSuspended();
  return outcome;
}
