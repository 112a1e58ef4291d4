import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../db/tables.js';

export type ChallengePurpose = 'registration' | 'authentication';
/** A challenge belongs to a login (its mfa_token's row) or to a session. */
export type ChallengeOwner = { loginTokenId: string } | { sessionId: string };

export async function insertChallenge(db: Kysely<Database>, challenge: { value: string; purpose: ChallengePurpose; userId: string; owner: ChallengeOwner; ttlSeconds: number }): Promise<void> {
  await db
    .insertInto('webauthn_challenges')
    .values({
      challenge: challenge.value,
      purpose: challenge.purpose,
      user_id: challenge.userId,
      login_token_id: 'loginTokenId' in challenge.owner ? challenge.owner.loginTokenId : null,
      session_id: 'sessionId' in challenge.owner ? challenge.owner.sessionId : null,
      expires_at: new Date(Date.now() + challenge.ttlSeconds * 1000),
    })
    .execute();
}

/**
 * Spends a challenge of this purpose, user and owner: it is deleted whether or not what answers
 * it verifies. True when it existed and had not expired.
 */
export async function takeChallenge(trx: Transaction<Database>, challenge: { value: string; purpose: ChallengePurpose; userId: string; owner: ChallengeOwner }): Promise<boolean> {
  let query = trx.deleteFrom('webauthn_challenges').where('challenge', '=', challenge.value).where('purpose', '=', challenge.purpose).where('user_id', '=', challenge.userId);
  query = 'loginTokenId' in challenge.owner ? query.where('login_token_id', '=', challenge.owner.loginTokenId) : query.where('session_id', '=', challenge.owner.sessionId);
  const taken = await query.returning('expires_at').executeTakeFirst();
  return taken !== undefined && taken.expires_at.getTime() > Date.now();
}

export async function deleteExpiredChallenges(db: Kysely<Database>): Promise<number> {
  const result = await db.deleteFrom('webauthn_challenges').where('expires_at', '<', sql<Date>`now()`).executeTakeFirst();
  return Number(result.numDeletedRows);
}
