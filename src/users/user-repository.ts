import { sql, type Kysely } from 'kysely';
import { containsPattern, countRows, keysetPage, type PageRequest } from '../db/list-queries.js';
import type { Database, NewUserRow, Role, UserRow, UserStatus, UserUpdate } from '../db/tables.js';
import { callerRead } from '../sessions/caller-query.js';

/** A user that is not deleted, beside the caller (the profile, a user's page). */
export const userById = callerRead<UserRow, [string]>('users.byId', (db, id) => db.selectFrom('users').selectAll().where('id', '=', id).where('deleted_at', 'is', null));

/** A user's row whether or not it was deleted (its ledger outlives it), beside the caller. */
export const userRecordById = callerRead<UserRow, [string]>('users.recordById', (db, id) => db.selectFrom('users').selectAll().where('id', '=', id));

/** A user that is not deleted, by id (for work outside a request's admission). */
export function findUserById(db: Kysely<Database>, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
}

/** A user's row whether or not it was deleted (work outside a request's admission, an erasure). */
export function findUserRecord(db: Kysely<Database>, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Of these lower-cased addresses, those no live account other than `exceptUserId` holds now. */
export async function addressesNobodyHolds(db: Kysely<Database>, addresses: string[], exceptUserId: string): Promise<string[]> {
  if (addresses.length === 0) return [];
  const held = await db
    .selectFrom('users')
    .select(sql<string>`lower(email)`.as('address'))
    .where(sql<string>`lower(email)`, 'in', addresses)
    .where('deleted_at', 'is', null)
    .where('id', '!=', exceptUserId)
    .execute();
  const taken = new Set(held.map((row) => row.address));
  return addresses.filter((address) => !taken.has(address));
}

export function findUserByIdForUpdate(db: Kysely<Database>, id: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .forUpdate()
    .executeTakeFirst();
}

/** What a login re-reads under a share lock before it starts a session (see login-service.ts). */
export function lockUserForLogin(db: Kysely<Database>, id: string) {
  return db
    .selectFrom('users')
    .select(['id', 'status', 'password_hash', 'session_version', 'deleted_at'])
    .where('id', '=', id)
    .forShare()
    .executeTakeFirst();
}

export function findUserByEmail(db: Kysely<Database>, email: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where(sql<string>`lower(email)`, '=', email.toLowerCase())
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

export function insertUser(db: Kysely<Database>, user: NewUserRow): Promise<UserRow> {
  return db.insertInto('users').values(user).returningAll().executeTakeFirstOrThrow();
}

/** Applies a change and moves `version` on by one; the caller has locked the row. */
export function updateUser(db: Kysely<Database>, id: string, change: UserUpdate): Promise<UserRow> {
  return db
    .updateTable('users')
    .set({ updated_at: new Date(), ...change, version: sql`version + 1` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Locks every active admin and the target, in one statement and in id order. Role changes,
 * suspensions and deletions all lock this way, so two of them can neither deadlock nor each
 * see the other as the remaining admin. Returns the ids of the active admins it locked.
 */
export async function lockActiveAdminsAndTarget(db: Kysely<Database>, targetId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('users')
    .select(['id', 'role', 'status'])
    .where('deleted_at', 'is', null)
    .where((eb) => eb.or([eb.and([eb('role', '=', 'admin'), eb('status', '=', 'active')]), eb('id', '=', targetId)]))
    .orderBy('id')
    .forUpdate()
    .execute();
  return rows.filter((row) => row.role === 'admin' && row.status === 'active').map((row) => row.id);
}

export async function anyAdminExists(db: Kysely<Database>): Promise<boolean> {
  const row = await db
    .selectFrom('users')
    .select('id')
    .where('role', '=', 'admin')
    .where('deleted_at', 'is', null)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

export interface UserFilter {
  q?: string | undefined;
  role?: Role | undefined;
  status?: UserStatus | undefined;
  email_verified?: boolean | undefined;
}

function filteredUsers(db: Kysely<Database>, filter: UserFilter) {
  let query = db.selectFrom('users').where('deleted_at', 'is', null);
  if (filter.role) query = query.where('role', '=', filter.role);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.email_verified !== undefined) query = query.where('email_verified', '=', filter.email_verified);
  if (filter.q) {
    const pattern = containsPattern(filter.q);
    query = query.where((eb) => eb.or([eb('email', 'ilike', pattern), eb('name', 'ilike', pattern)]));
  }
  return query;
}

/** Newest first, keyset on (created_at, id), so concurrent inserts never shift a page. */
export function usersPage(db: Kysely<Database>, filter: UserFilter, page: PageRequest) {
  return keysetPage(filteredUsers(db, filter).selectAll(), page, 'newest-first');
}

export function countUsers(db: Kysely<Database>, filter: UserFilter): Promise<number> {
  return countRows(filteredUsers(db, filter));
}
