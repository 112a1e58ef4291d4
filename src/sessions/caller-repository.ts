import { sql, type Kysely } from 'kysely';
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
  /** The session's last use was noted more than a minute ago (or never): note it again. */
  session_stale: boolean;
}

/** A user's role and status now; a deleted user is no caller. */
export function findCaller(db: Kysely<Database>, id: string): Promise<Caller | undefined> {
  return db.selectFrom('users').select(['id', 'role', 'status']).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
}

/** The columns of `callerQuery`, prefixed so that they never clash with a data query's. */
export interface CallerColumns {
  caller__role: Role;
  caller__status: UserStatus;
  caller__session_open: boolean;
  caller__session_stale: boolean;
}

/**
 * The caller's role and status and whether the session the token names is still open, by
 * primary keys: no row for a deleted or unknown user. Read on its own or with a request's data.
 */
export function callerQuery(db: Kysely<Database>, id: string, sessionId: string) {
  return db
    .selectFrom('users')
    .leftJoin('sessions', (join) => join.on('sessions.id', '=', sessionId).onRef('sessions.user_id', '=', 'users.id'))
    .select([
      'users.role as caller__role',
      'users.status as caller__status',
      sql<boolean>`(sessions.id is not null and sessions.ended_at is null and sessions.expires_at > now())`.as('caller__session_open'),
      // Worked out here, on the database's clock: a flag costs less to read than a timestamp.
      sql<boolean>`(sessions.last_used_at is null or sessions.last_used_at < now() - interval '1 minute')`.as('caller__session_stale'),
    ])
    .where('users.id', '=', id)
    .where('users.deleted_at', 'is', null);
}

export function toCallerWithSession(row: CallerColumns, id: string, sessionId: string): CallerWithSession {
  return {
    id,
    role: row.caller__role,
    status: row.caller__status,
    session_id: sessionId,
    session_open: row.caller__session_open,
    session_stale: row.caller__session_stale,
  };
}

/** The per-request lookup behind authentication, when no data travels with it. */
export async function findCallerWithSession(db: Kysely<Database>, id: string, sessionId: string): Promise<CallerWithSession | undefined> {
  const row = await callerQuery(db, id, sessionId).executeTakeFirst();
  return row && toCallerWithSession(row, id, sessionId);
}
