import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../db/tables.js';
import { endSessions } from '../sessions/session-service.js';
import { spendAccountTokens } from './account-token-repository.js';
import { spendCodesOfUser } from './email-code-repository.js';

/**
 * What every change that must end a user's sessions does, in its transaction and under the
 * user's row lock (password change and reset, suspension, deletion): the session version moves,
 * so a login that read the user before this commits starts no session (login-service.ts);
 * every open session ends, with its refresh tokens; reset links and email sign-in codes stop
 * working. Returns the ids of the sessions it ended.
 */
export async function endEverySession(trx: Transaction<Database>, userId: string): Promise<string[]> {
  await moveSessionVersion(trx, userId);
  await spendAccountTokens(trx, userId, 'password_reset');
  await spendCodesOfUser(trx, userId);
  return endSessions(trx, { userId });
}

/**
 * What a change of second factors made in a session does to the user's other sessions (a factor
 * removed), under the user's row lock: the session version moves, so a login waiting for its
 * second step (its `mfa_token`) starts no session, and every other session ends. Returns the ids
 * of the sessions it ended.
 */
export async function endOtherSessions(trx: Transaction<Database>, userId: string, keptSessionId: string): Promise<string[]> {
  await moveSessionVersion(trx, userId);
  return endSessions(trx, { userId, exceptSessionId: keptSessionId });
}

async function moveSessionVersion(trx: Transaction<Database>, userId: string): Promise<void> {
  await trx.updateTable('users').set({ session_version: sql`session_version + 1` }).where('id', '=', userId).execute();
}
