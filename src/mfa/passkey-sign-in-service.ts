import type { AuthenticationResponseJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import type { Kysely } from 'kysely';
import type { Database, SessionRow } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import type { EventContext } from '../events/event-recorder.js';
import { accountSuspended } from '../http/errors.js';
import type { TokenIssuer } from '../sessions/token-issuer.js';
import { openSession, type ClientDetails, type SessionOptions, type TokenPair } from '../sessions/token-pairs.js';
import { beginLoginAttempt, loginSucceeded } from '../users/account-limit-service.js';
import { findUserById, lockUserForLogin } from '../users/user-service.js';
import { insertSignInChallenge, takeSignInChallenge } from './challenge-repository.js';
import { findPasskeyHolder } from './factor-repository.js';
import { secondStepOf, type SecondStep } from './mfa-login-service.js';
import type { MfaSettings } from './mfa-settings.js';
import { CHALLENGE_TTL_SECONDS, challengeOf, isUserHandleOf, signInOptions } from './passkeys.js';
import { checkSecondFactor, invalidMfaCode, secondFactorLocked } from './second-factor-check.js';

/**
 * Options for a sign-in by a discoverable passkey (API.md section 19): no `allowCredentials`, and
 * a challenge kept in the database for 5 minutes, for one assertion, belonging to nobody until a
 * passkey answers it. Nothing of the caller is remembered anywhere else.
 */
export async function signInChallenge(db: Kysely<Database>, settings: MfaSettings): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const options = await signInOptions(settings.party);
  await insertSignInChallenge(db, { value: options.challenge, ttlSeconds: CHALLENGE_TTL_SECONDS });
  return options;
}

type Started = { pair: TokenPair; session: SessionRow };
type SignInOutcome = Started | { secondStep: SecondStep } | { refusal: 'assertion' | 'suspended' } | { lockedForSeconds: number };

/**
 * A sign-in by passkey. The credential id of the assertion finds the passkey and its user (a
 * credential id belongs to one user); the assertion's `userHandle` must be present and be that
 * user's (WebAuthn's step for a user not known before the ceremony). An unknown or removed
 * passkey, or one whose handle names someone else, spends the challenge it names and is refused;
 * no account is known to count it against (the route's per-address budget bounds such tries).
 *
 * For a known passkey the rest is the password login's and the second step's way: the attempt
 * counts toward the account's failed logins (LOGIN_ACCOUNT_FAILURE_LIMIT) until it proves right;
 * the assertion is checked as a passkey is at a second step (the user's second-factor lock,
 * the challenge spent good or bad, the signature counter that must move, a wrong one counted
 * toward MFA_FAILURE_LIMIT), in a transaction that holds the user under a share lock, so a
 * password change, suspension or deletion that commits meanwhile ends the session it starts.
 * Only a right assertion reveals a suspension. With user verification the passkey counts as two
 * factors (`amr` `hwk`, `mfa`); without it, a user with a TOTP factor gets the second step of a
 * login, else the session starts with `amr` `hwk` alone. The hosted pages pass the options of
 * their sign-in session (API.md section 18); the API passes none.
 */
export async function signInWithPasskey(
  db: Kysely<Database>,
  issuer: TokenIssuer,
  settings: MfaSettings,
  response: AuthenticationResponseJSON,
  client: ClientDetails,
  limits: { accountFailureLimit: number },
  context: EventContext,
  sessionOptions: SessionOptions = {},
): Promise<Started | { secondStep: SecondStep }> {
  const holder = await findPasskeyHolder(db, response.id);
  const handle = response.response.userHandle;
  // WebAuthn Level 3, 7.2 step 6: nobody was identified before this ceremony, so the assertion must
  // name its user, and that user must hold the credential.
  const user = holder === undefined || !handle || !isUserHandleOf(handle, holder) ? undefined : await findUserById(db, holder);
  if (!user) {
    const challenge = challengeOf(response);
    if (challenge) await inTransaction(db, (trx) => takeSignInChallenge(trx, challenge));
    throw invalidMfaCode();
  }
  const attempt = await beginLoginAttempt(db, user.email, limits.accountFailureLimit);
  const outcome = await inTransaction(db, async (trx): Promise<SignInOutcome> => {
    const now = await lockUserForLogin(trx, user.id);
    if (!now || now.deleted_at) {
      const challenge = challengeOf(response);
      if (challenge) await takeSignInChallenge(trx, challenge);
      return { refusal: 'assertion' };
    }
    const checked = await checkSecondFactor(trx, settings, { id: user.id, email: user.email }, { webauthn: response }, { signIn: true }, { ...context, actorId: user.id, actorType: 'user' });
    if ('lockedForSeconds' in checked) return checked;
    if ('wrong' in checked) return { refusal: 'assertion' };
    if (now.status !== 'active') return { refusal: 'suspended' };
    if (checked.userVerified) return openSession(trx, issuer, user.id, client, { amr: ['hwk', 'mfa'] }, undefined, sessionOptions);
    const secondStep = await secondStepOf(trx, { id: user.id, session_version: now.session_version }, 'hwk');
    return secondStep ? { secondStep } : openSession(trx, issuer, user.id, client, { amr: ['hwk'] }, undefined, sessionOptions);
  });
  if ('refusal' in outcome && outcome.refusal === 'assertion') throw invalidMfaCode();
  await loginSucceeded(db, attempt);
  if ('lockedForSeconds' in outcome) throw secondFactorLocked(outcome.lockedForSeconds);
  if ('refusal' in outcome) throw accountSuspended();
  return outcome;
}
