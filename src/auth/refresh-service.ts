import type { Transaction } from 'kysely';
import type { Database } from '../db/tables.js';
import { record, type EventContext } from '../events/event-recorder.js';
import { rotateRefreshToken, type RefreshOutcome } from '../sessions/refresh-rotation.js';
import type { TokenIssuer } from '../sessions/token-issuer.js';

/**
 * A refresh, in the transaction the route's admission opened. A spent token that came back
 * after the reuse interval has ended its session: that is recorded here as the service's own
 * change (`user.sessions_ended`, cause `refresh_reuse`, no actor), committed with it.
 */
export async function refreshSession(trx: Transaction<Database>, issuer: TokenIssuer, refreshToken: string, context: EventContext): Promise<RefreshOutcome> {
  const outcome = await rotateRefreshToken(trx, issuer, refreshToken);
  if ('refusal' in outcome && outcome.refusal === 'reused' && outcome.endedSessionIds.length > 0) {
    const data = { cause: 'refresh_reuse', session_ids: outcome.endedSessionIds };
    await record(trx, { type: 'user.sessions_ended', subjectType: 'user', subjectId: outcome.userId, data }, { ...context, actorId: null });
  }
  return outcome;
}
