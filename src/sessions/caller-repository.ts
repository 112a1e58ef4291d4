import type { Kysely } from 'kysely';
import type { Database, Role, UserStatus } from '../db/tables.js';

/** Who makes a request, as the database says now. */
export interface Caller {
  id: string;
  role: Role;
  status: UserStatus;
  session_version: number;
}

/** The per-request lookup behind authentication: small, by primary key; a deleted user is no caller. */
export function findCaller(db: Kysely<Database>, id: string): Promise<Caller | undefined> {
  return db
    .selectFrom('users')
    .select(['id', 'role', 'status', 'session_version'])
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}
