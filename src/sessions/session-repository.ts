import { sql, type Kysely } from 'kysely';
import type { Database, SessionRow } from '../db/tables.js';

export function insertSession(db: Kysely<Database>, session: Omit<SessionRow, 'ended_at'>): Promise<SessionRow> {
  return db.insertInto('sessions').values(session).returningAll().executeTakeFirstOrThrow();
}

export function findSessionForUpdate(db: Kysely<Database>, id: string): Promise<SessionRow | undefined> {
  return db.selectFrom('sessions').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/** The sessions still open, newest first. */
export function listActiveSessions(db: Kysely<Database>, userId: string): Promise<SessionRow[]> {
  return db
    .selectFrom('sessions')
    .selectAll()
    .where('user_id', '=', userId)
    .where('ended_at', 'is', null)
    .where('expires_at', '>', new Date())
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/** Ends the open sessions of a user, or one of them; returns the ids it ended. */
export async function endSessions(db: Kysely<Database>, which: { userId: string; sessionId?: string }): Promise<string[]> {
  let query = db.updateTable('sessions').set({ ended_at: new Date() }).where('user_id', '=', which.userId).where('ended_at', 'is', null);
  if (which.sessionId) query = query.where('id', '=', which.sessionId);
  const ended = await query.returning('id').execute();
  if (ended.length > 0) {
    await db
      .updateTable('refresh_tokens')
      .set({ revoked_at: new Date() })
      .where('family_id', 'in', ended.map((row) => row.id))
      .where('revoked_at', 'is', null)
      .execute();
  }
  return ended.map((row) => row.id);
}

export async function extendSession(db: Kysely<Database>, id: string, expiresAt: Date): Promise<void> {
  await db.updateTable('sessions').set({ expires_at: expiresAt, last_used_at: new Date() }).where('id', '=', id).execute();
}

/** At most one write a minute per session, however many requests it makes. */
export async function touchSession(db: Kysely<Database>, id: string): Promise<void> {
  await sql`update sessions set last_used_at = now() where id = ${id} and last_used_at < now() - interval '1 minute'`.execute(db);
}
