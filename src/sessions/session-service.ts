import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { record, type EventContext } from '../events/event-recorder.js';
import { endSessions, findSessionForUpdate } from './session-repository.js';

/**
 * Ends one session of a user, or all of them, and records `user.sessions_ended` when any was
 * open; returns the ids it ended. Their access tokens fail on their next request.
 */
export function signOut(
  db: Kysely<Database>,
  which: { userId: string; sessionId?: string },
  cause: 'logout' | 'sign_out' | 'admin_sign_out',
  context: EventContext,
): Promise<string[]> {
  return inTransaction(db, async (trx) => {
    const ended = await endSessions(trx, which);
    if (ended.length > 0) {
      await record(trx, { type: 'user.sessions_ended', subjectType: 'user', subjectId: which.userId, data: { cause, session_ids: ended } }, context);
    }
    return ended;
  });
}

/**
 * Ends one session of a user, locked first (over HTTP that read is the transaction's first
 * statement, and carries the caller check); false when it is not theirs or has ended already.
 */
export function endSession(db: Kysely<Database>, which: { userId: string; sessionId: string }, context: EventContext): Promise<boolean> {
  return inTransaction(db, async (trx) => {
    const session = await findSessionForUpdate(trx, which.sessionId);
    if (!session || session.user_id !== which.userId || session.ended_at) return false;
    await signOut(trx, which, 'sign_out', context);
    return true;
  });
}
