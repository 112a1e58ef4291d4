import { createHash, randomBytes } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Database, FirstFactor, SessionRow } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import type { EventContext } from '../events/event-recorder.js';
import { accountSuspended, AppError } from '../http/errors.js';
import type { TokenIssuer } from '../sessions/token-issuer.js';
import { openSession, type ClientDetails, type SessionOptions, type SessionStart, type TokenPair } from '../sessions/token-pairs.js';
import { beginLoginAttempt, loginSucceeded } from '../users/account-limit-service.js';
import { findUserById, lockUserForLogin } from '../users/user-service.js';
import { factorsOfUser } from './factor-repository.js';
import { countLoginTokenFailure, findLoginToken, insertLoginToken, lockLoginToken, spendLoginToken } from './login-token-repository.js';
import type { MfaSettings } from './mfa-settings.js';
import { countRecoveryCodesLeft } from './recovery-code-repository.js';
import { checkSecondFactor, invalidMfaCode, methodsOf, secondFactorLocked, type ProofMethod, type SecondFactorProof } from './second-factor-check.js';

/** An mfa_token is good for 5 minutes, and for 4 wrong codes: the 5th kills it. */
const LOGIN_TOKEN_TTL_SECONDS = 300;
const WRONG_CODES_PER_TOKEN = 5;

const hashLoginToken = (token: string) => createHash('sha256').update(token).digest('hex');

export const invalidMfaToken = () => new AppError('invalid_mfa_token', 'The mfa_token is unknown, expired or spent, or has seen 5 wrong codes: log in again.');

/** What a login whose user has a second factor answers instead of a session. */
export interface SecondStep {
  mfa_token: string;
  methods: ('totp' | 'webauthn' | 'recovery_code')[];
}

/** The 403 `mfa_required` of a sign-in whose user has a second factor (a password's, or a passkey's without user verification). */
export const mfaRequired = (secondStep: SecondStep) =>
  new AppError('mfa_required', 'This account has a second factor: send it with the mfa_token to POST /api/auth/login/mfa.', undefined, undefined, { ...secondStep });

/**
 * The second step a login needs, in the login's transaction once its first factor was found
 * right: undefined for a user without a confirmed factor that could follow it (the login starts
 * its session), else a new `mfa_token` (256 random bits, kept as its hash) tied to the session
 * version the login saw and to the first factor. After a password or an email code any factor may follow; after a
 * passkey without user verification only another kind (TOTP, then also a recovery code): a second
 * passkey assertion would prove the same possession again. Nothing of a session exists until the
 * second step.
 */
export async function secondStepOf(trx: Transaction<Database>, user: { id: string; session_version: number }, firstFactor: FirstFactor = 'pwd'): Promise<SecondStep | undefined> {
  const methods = await secondFactorMethods(trx, user.id, firstFactor);
  if (methods === undefined) return undefined;
  const token = randomBytes(32).toString('base64url');
  await insertLoginToken(trx, { tokenHash: hashLoginToken(token), userId: user.id, sessionVersion: user.session_version, firstFactor, ttlSeconds: LOGIN_TOKEN_TTL_SECONDS });
  return { mfa_token: token, methods };
}

/** The methods that may follow `firstFactor` for the user; undefined when it has no confirmed factor that could. */
async function secondFactorMethods(db: Kysely<Database>, userId: string, firstFactor: FirstFactor): Promise<SecondStep['methods'] | undefined> {
  const factors = (await factorsOfUser(db, userId)).filter((factor) => firstFactor !== 'hwk' || factor.type !== 'webauthn');
  if (factors.length === 0) return undefined;
  return methodsOf(factors.map((factor) => factor.type), await countRecoveryCodesLeft(db, userId));
}

/**
 * RFC 8176 values for a session started with this first factor and this second one. A passkey
 * never follows a passkey (the second step refuses it before any check), so `hwk` after `hwk`
 * is there only to complete the table.
 */
const SESSION_START: Record<FirstFactor, Record<ProofMethod, SessionStart>> = {
  pwd: { otp: { amr: ['pwd', 'otp', 'mfa'] }, hwk: { amr: ['pwd', 'hwk', 'mfa'] }, recovery_code: { amr: ['pwd', 'mfa'] } },
  email: { otp: { amr: ['email', 'otp', 'mfa'] }, hwk: { amr: ['email', 'hwk', 'mfa'] }, recovery_code: { amr: ['email', 'mfa'] } },
  hwk: { otp: { amr: ['hwk', 'otp', 'mfa'] }, hwk: { amr: ['hwk', 'mfa'] }, recovery_code: { amr: ['hwk', 'mfa'] } },
  fed: { otp: { amr: ['fed', 'otp', 'mfa'] }, hwk: { amr: ['fed', 'hwk', 'mfa'] }, recovery_code: { amr: ['fed', 'mfa'] } },
};

/** The user a live login token names (before any limit is spent): what the rate limits count by. */
export async function loginTokenUser(db: Kysely<Database>, mfaToken: string): Promise<{ tokenId: string; userId: string; email: string } | undefined> {
  const token = await findLoginToken(db, hashLoginToken(mfaToken));
  if (!token || token.used_at || token.expires_at.getTime() <= Date.now() || token.failures >= WRONG_CODES_PER_TOKEN) return undefined;
  const user = await findUserById(db, token.user_id);
  return user ? { tokenId: token.id, userId: user.id, email: user.email } : undefined;
}

/** The methods a login's second step offers, as its first step listed them: for a hosted page that asks again after a wrong code. */
export async function methodsOfLoginToken(db: Kysely<Database>, mfaToken: string): Promise<SecondStep['methods']> {
  const token = await findLoginToken(db, hashLoginToken(mfaToken));
  return token ? ((await secondFactorMethods(db, token.user_id, token.first_factor)) ?? []) : [];
}

type SecondStepOutcome = { pair: TokenPair; session: SessionRow } | { refusal: 'token' | 'code' | 'suspended' } | { lockedForSeconds: number };

/**
 * A login's second step: the code counts toward the account's failed logins until it proves
 * right (as a password does), the token is locked for the check, and the session starts in the
 * same transaction as the token is spent, under a share lock of the user that finds any password
 * change, reset, suspension, deletion or factor reset since the first step (the session version
 * moved) and starts nothing then. A wrong code is counted on the token (and toward the user's
 * second-factor lock) and committed before the refusal; the 5th kills the token. While the user's
 * second-factor checks are locked the step is 429 and neither the token nor the account's failed
 * logins count it: the password step stays open. The hosted pages pass the options of their
 * sign-in session (API.md section 18).
 */
export async function completeSecondStep(
  db: Kysely<Database>,
  issuer: TokenIssuer,
  settings: MfaSettings,
  login: { tokenId: string; userId: string; email: string; proof: SecondFactorProof },
  client: ClientDetails,
  limits: { accountFailureLimit: number },
  context: EventContext,
  sessionOptions: SessionOptions = {},
): Promise<{ pair: TokenPair; session: SessionRow }> {
  const attempt = await beginLoginAttempt(db, login.email, limits.accountFailureLimit);
  const outcome = await inTransaction(db, async (trx): Promise<SecondStepOutcome> => {
    const token = await lockLoginToken(trx, login.tokenId);
    if (!token || token.used_at || token.expires_at.getTime() <= Date.now() || token.failures >= WRONG_CODES_PER_TOKEN) return { refusal: 'token' };
    const user = await lockUserForLogin(trx, token.user_id);
    if (!user || user.deleted_at || user.session_version !== token.session_version) return { refusal: 'token' };
    if (token.first_factor === 'hwk' && 'webauthn' in login.proof) {
      // A passkey's sign-in is not completed by a passkey: a wrong answer for this token, not a wrong passkey.
      await countLoginTokenFailure(trx, token.id);
      return { refusal: 'code' };
    }
    const checked = await checkSecondFactor(trx, settings, { id: user.id, email: login.email }, login.proof, { loginTokenId: token.id }, { ...context, actorId: user.id, actorType: 'user' });
    if ('lockedForSeconds' in checked) return checked;
    if ('wrong' in checked) {
      await countLoginTokenFailure(trx, token.id);
      return { refusal: 'code' };
    }
    await spendLoginToken(trx, token.id);
    if (user.status !== 'active') return { refusal: 'suspended' };
    return openSession(trx, issuer, user.id, client, SESSION_START[token.first_factor][checked.method], undefined, sessionOptions);
  });
  if ('pair' in outcome) {
    await loginSucceeded(db, attempt);
    return outcome;
  }
  if ('lockedForSeconds' in outcome) {
    await loginSucceeded(db, attempt);
    throw secondFactorLocked(outcome.lockedForSeconds);
  }
  if (outcome.refusal !== 'code') await loginSucceeded(db, attempt);
  if (outcome.refusal === 'suspended') throw accountSuspended();
  throw outcome.refusal === 'token' ? invalidMfaToken() : invalidMfaCode();
}
