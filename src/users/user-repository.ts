import { sql, type Kysely } from 'kysely';
import { containsPattern, countRows, keysetPage, type PageRequest } from '../db/list-queries.js';
import { preparedQuery } from '../db/prepared-query.js';
import type { Database, NewUserRow, Role, UserRow, UserStatus, UserUpdate } from '../db/tables.js';

const userById = preparedQuery((db, id) => db.selectFrom('users').selectAll().where('id', '=', id).where('deleted_at', 'is', null));

export async function findUserById(db: Kysely<Database>, id: string): Promise<UserRow | undefined> {
  return (await userById(db, id))[0];
}

/** A user's row whether or not it was deleted: its ledger outlives it. */
export function findUserRecordById(db: Kysely<Database>, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
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
export function listUsers(db: Kysely<Database>, filter: UserFilter, page: PageRequest): Promise<UserRow[]> {
  return keysetPage(filteredUsers(db, filter).selectAll(), page, 'newest-first').execute();
}

export function countUsers(db: Kysely<Database>, filter: UserFilter): Promise<number> {
  return countRows(filteredUsers(db, filter));
}
