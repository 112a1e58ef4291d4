import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { record, type EventContext } from '../events/event-recorder.js';
import { endSessions } from './session-repository.js';

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
