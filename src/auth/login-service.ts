import type { Kysely } from 'kysely';
import type { Database, SessionRow } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { accountSuspended, AppError } from '../http/errors.js';
import { verifyPassword } from '../sessions/passwords.js';
import type { TokenIssuer } from '../sessions/token-issuer.js';
import { openSession, PASSWORD_ONLY, type ClientDetails, type SessionOptions, type TokenPair } from '../sessions/token-pairs.js';
import { secondStepOf, type SecondStep } from '../mfa/mfa-login-service.js';
import { beginLoginAttempt, loginSucceeded } from '../users/account-limit-service.js';
import { findUserByEmail, lockUserForLogin } from '../users/user-service.js';

export const invalidCredentials = () => new AppError('invalid_credentials', 'The email or password is wrong.');

/**
 * A login: the account's failed-login limit, the password (argon2, outside any transaction),
 * then the session. The session starts in a transaction that re-reads the user under a share
 * lock: a password change, reset, suspension or deletion that committed while the password was
 * being verified has moved `session_version` (or the hash, or the status), and the login starts
 * no session; one that commits after this transaction ends the session it started. Either way
 * no session of a login that began before such a change outlives it (API.md section 10).
 * A user with a second factor gets no session yet: the login answers with its second step (an
 * `mfa_token`, API.md section 12), issued under the same lock. The hosted pages pass the
 * options of their sign-in session (API.md section 18); the API passes none.
 */
export async function logIn(
  db: Kysely<Database>,
  issuer: TokenIssuer,
  credentials: { email: string; password: string },
  client: ClientDetails,
  accountFailureLimit: number,
  sessionOptions: SessionOptions = {},
): Promise<{ pair: TokenPair; session: SessionRow } | { secondStep: SecondStep }> {
  const attempt = await beginLoginAttempt(db, credentials.email, accountFailureLimit);
  const user = await findUserByEmail(db, credentials.email);
  const passwordMatches = await verifyPassword(user?.password_hash, credentials.password);
  if (!user || !passwordMatches) throw invalidCredentials();
  await loginSucceeded(db, attempt);
  if (user.status === 'suspended') throw accountSuspended();
  return inTransaction(db, async (trx) => {
    const now = await lockUserForLogin(trx, user.id);
    if (!now || now.deleted_at || now.password_hash !== user.password_hash || now.session_version !== user.session_version) throw invalidCredentials();
    if (now.status !== 'active') throw accountSuspended();
    const secondStep = await secondStepOf(trx, { id: user.id, session_version: now.session_version });
    return secondStep ? { secondStep } : await openSession(trx, issuer, user.id, client, PASSWORD_ONLY, undefined, sessionOptions);
  });
}
