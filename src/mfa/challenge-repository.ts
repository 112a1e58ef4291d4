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

/** A passkey sign-in's challenge: no user and no owner until a passkey answers it (API.md section 19). */
export async function insertSignInChallenge(db: Kysely<Database>, challenge: { value: string; ttlSeconds: number }): Promise<void> {
  await db
    .insertInto('webauthn_challenges')
    .values({ challenge: challenge.value, purpose: 'sign_in', user_id: null, login_token_id: null, session_id: null, expires_at: new Date(Date.now() + challenge.ttlSeconds * 1000) })
    .execute();
}

/**
 * Spends a sign-in challenge: deleted whether or not what answers it verifies. True when it
 * existed and had not expired. Of requests racing with one challenge, one finds it.
 */
export async function takeSignInChallenge(trx: Transaction<Database>, value: string): Promise<boolean> {
  const taken = await trx.deleteFrom('webauthn_challenges').where('challenge', '=', value).where('purpose', '=', 'sign_in').returning('expires_at').executeTakeFirst();
  return taken !== undefined && taken.expires_at.getTime() > Date.now();
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
