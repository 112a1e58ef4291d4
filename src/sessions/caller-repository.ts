import type { Kysely } from 'kysely';
import type { Database, Role, UserStatus } from '../db/tables.js';

/** Who makes a request, as the database says now. */
export interface Caller {
  id: string;
  role: Role;
  status: UserStatus;
  /** The session of the token making the request, once authenticated. */
  session_id?: string;
}

export interface CallerWithSession extends Caller {
  session_id: string;
  /** False when the session ended, expired, or belongs to someone else. */
  session_open: boolean;
  session_last_used_at: Date | null;
}

/** A user's role and status now; a deleted user is no caller. */
export function findCaller(db: Kysely<Database>, id: string): Promise<Caller | undefined> {
  return db.selectFrom('users').select(['id', 'role', 'status']).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
}

/**
 * The per-request lookup behind authentication, in one statement by primary keys: the caller's
 * role and status and whether the session the token names is still open.
 */
export async function findCallerWithSession(db: Kysely<Database>, id: string, sessionId: string): Promise<CallerWithSession | undefined> {
  const row = await db
    .selectFrom('users')
    .leftJoin('sessions', (join) => join.on('sessions.id', '=', sessionId).onRef('sessions.user_id', '=', 'users.id'))
    .select(['users.id', 'users.role', 'users.status', 'sessions.ended_at', 'sessions.expires_at', 'sessions.last_used_at'])
    .where('users.id', '=', id)
    .where('users.deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  const open = row.expires_at !== null && row.ended_at === null && new Date(row.expires_at).getTime() > Date.now();
  return { id: row.id, role: row.role, status: row.status, session_id: sessionId, session_open: open, session_last_used_at: row.last_used_at };
}
