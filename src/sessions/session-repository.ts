import { sql, type Insertable, type Kysely, type Transaction } from 'kysely';
import { keysetPage, type PageRequest } from '../db/list-queries.js';
import type { Database, SessionRow, SessionsTable } from '../db/tables.js';

export function insertSession(db: Kysely<Database>, session: Insertable<SessionsTable>): Promise<SessionRow> {
  return db.insertInto('sessions').values(session).returningAll().executeTakeFirstOrThrow();
}

/** A session by id, ended or not (introspection reads what it is now, and locks nothing). */
export function findSession(db: Kysely<Database>, id: string): Promise<SessionRow | undefined> {
  return db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findSessionForUpdate(db: Kysely<Database>, id: string): Promise<SessionRow | undefined> {
  return db.selectFrom('sessions').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/** A user's sessions still open, newest first. */
export function activeSessions(db: Kysely<Database>, userId: string) {
  return db
    .selectFrom('sessions')
    .selectAll()
    .where('user_id', '=', userId)
    .where('ended_at', 'is', null)
    .where('expires_at', '>', new Date())
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc');
}

export function listActiveSessions(db: Kysely<Database>, userId: string): Promise<SessionRow[]> {
  return activeSessions(db, userId).execute();
}

/**
 * Ends the open sessions of a user, or one of them, or all but one, or those one app holds for
 * the user (`clientId`), or a sign-in session of the hosted pages with every session it started
 * for apps (`signinSessionId`); returns the ids it ended.
 */
export async function endSessions(
  db: Kysely<Database>,
  which: { userId: string; sessionId?: string; exceptSessionId?: string; clientId?: string; signinSessionId?: string },
): Promise<string[]> {
  let query = db.updateTable('sessions').set({ ended_at: new Date() }).where('user_id', '=', which.userId).where('ended_at', 'is', null);
  if (which.sessionId) query = query.where('id', '=', which.sessionId);
  if (which.clientId) query = query.where('client_id', '=', which.clientId);
  const signinSessionId = which.signinSessionId;
  if (signinSessionId) query = query.where((where) => where.or([where('id', '=', signinSessionId), where('signin_session_id', '=', signinSessionId)]));
  if (which.exceptSessionId) query = query.where('id', '!=', which.exceptSessionId);
  const ended = (await query.returning('id').execute()).map((row) => row.id);
  await revokeRefreshTokensOf(db, ended);
  return ended;
}

/** The refresh tokens of sessions just ended stop working with them (a session's id is its token family's). */
async function revokeRefreshTokensOf(db: Kysely<Database>, sessionIds: string[]): Promise<void> {
  if (sessionIds.length === 0) return;
  await db.updateTable('refresh_tokens').set({ revoked_at: new Date() }).where('family_id', 'in', sessionIds).where('revoked_at', 'is', null).execute();
}

/**
 * Ends every open session an app holds, for all its users, with their refresh tokens: the app was
 * disabled or deleted (API.md section 11: its tokens issued before stay refused when it is enabled again).
 */
export async function endSessionsOfApp(db: Kysely<Database>, clientId: string): Promise<number> {
  const ended = await db.updateTable('sessions').set({ ended_at: new Date() }).where('client_id', '=', clientId).where('ended_at', 'is', null).returning('id').execute();
  await revokeRefreshTokensOf(
    db,
    ended.map((row) => row.id),
  );
  return ended.length;
}

export async function extendSession(db: Kysely<Database>, id: string, expiresAt: Date): Promise<void> {
  await db.updateTable('sessions').set({ expires_at: expiresAt, last_used_at: new Date() }).where('id', '=', id).execute();
}

/** At most one write a minute per session, however many requests it makes. */
export async function touchSession(db: Kysely<Database>, id: string): Promise<void> {
  await sql`update sessions set last_used_at = now() where id = ${id} and last_used_at < now() - interval '1 minute'`.execute(db);
}

/** The session's second factor is verified now (a login's second step, a step-up, a confirmed factor). */
export async function markSecondFactorVerified(db: Kysely<Database>, id: string): Promise<Date> {
  const row = await db.updateTable('sessions').set({ mfa_verified_at: new Date() }).where('id', '=', id).returning('mfa_verified_at').executeTakeFirstOrThrow();
  return row.mfa_verified_at!;
}

/** Every session of a user, ended ones too, oldest first, a page at a time (a data export). */
export function allSessionsOfUserPage(db: Kysely<Database>, userId: string, page: PageRequest): Promise<SessionRow[]> {
  return keysetPage(db.selectFrom('sessions').selectAll().where('user_id', '=', userId), page, 'oldest-first').execute();
}

/** An erasure: every session of the user goes, with the addresses and user agents it kept, and its refresh tokens. */
export async function deleteSessionsOfUser(trx: Transaction<Database>, userId: string): Promise<void> {
  await trx.deleteFrom('refresh_tokens').where('user_id', '=', userId).execute();
  await trx.deleteFrom('sessions').where('user_id', '=', userId).execute();
}

const PURGE_BATCH = 1000;

/**
 * Retention: sessions that ended, or expired, before the cutoff go with their refresh tokens, a
 * batch at a time. Idempotent, so two instances purging at once only share the work.
 */
export async function purgeSessionsEndedBefore(db: Kysely<Database>, cutoff: Date): Promise<number> {
  let purged = 0;
  for (;;) {
    const result = await sql<{ id: string }>`
      with gone as (
        delete from sessions
        where id in (select id from sessions where ended_at < ${cutoff} or expires_at < ${cutoff} limit ${PURGE_BATCH})
        returning id
      ), tokens as (
        delete from refresh_tokens where family_id in (select id from gone)
      )
      select id from gone`.execute(db);
    purged += result.rows.length;
    if (result.rows.length < PURGE_BATCH) return purged;
  }
}

/** What the hosted pages know of the browser's sign-in: its session, its user, and how and when the user authenticated. */
export interface LiveSigninSession {
  id: string;
  user_id: string;
  auth_time: Date;
  amr: string[];
  /** The user's email, which the consent page shows so the person knows whose account the app gets. */
  email: string;
}

/**
 * The hosted pages' sign-in session whose browser cookie's secret hashes to `browserSecretHash`
 * (API.md section 18), read on every request: only while it has not ended or expired and its
 * user is active and not deleted, so a logout, suspension, deletion or password change counts
 * on the very next page.
 */
export function findLiveSigninSession(db: Kysely<Database>, browserSecretHash: string): Promise<LiveSigninSession | undefined> {
  return db
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.user_id')
    .select(['sessions.id', 'sessions.user_id', 'sessions.auth_time', 'sessions.amr', 'users.email'])
    .where('sessions.browser_secret_hash', '=', browserSecretHash)
    .where('sessions.ended_at', 'is', null)
    .where('sessions.expires_at', '>', new Date())
    .where('users.status', '=', 'active')
    .where('users.deleted_at', 'is', null)
    .executeTakeFirst();
}
