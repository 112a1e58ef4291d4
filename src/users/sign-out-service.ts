import type { Transaction } from 'kysely';
import type { Database } from '../db/tables.js';
import { record, type EventContext } from '../events/event-recorder.js';
import { endSessions, findSessionForUpdate } from '../sessions/session-service.js';

/**
 * Ends one session of a user, or all of them, and records `user.sessions_ended` when any was
 * open; returns the ids it ended. Their access tokens fail on their next request.
 */
export async function signOut(
  trx: Transaction<Database>,
  which: { userId: string; sessionId?: string; signinSessionId?: string },
  cause: 'logout' | 'sign_out' | 'admin_sign_out',
  context: EventContext,
): Promise<string[]> {
  const ended = await endSessions(trx, which);
  if (ended.length > 0) {
    await record(trx, { type: 'user.sessions_ended', subjectType: 'user', subjectId: which.userId, data: { cause, session_ids: ended } }, context);
  }
  return ended;
}

/** Ends one session of a user, locked first; false when it is not theirs or has ended already. */
export async function endSession(trx: Transaction<Database>, which: { userId: string; sessionId: string }, context: EventContext): Promise<boolean> {
  const session = await findSessionForUpdate(trx, which.sessionId);
  if (!session || session.user_id !== which.userId || session.ended_at) return false;
  await signOut(trx, which, 'sign_out', context);
  return true;
}
