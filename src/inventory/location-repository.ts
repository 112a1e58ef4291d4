import { sql, type Transaction } from 'kysely';
import type { Database, LocationRow } from '../db/tables.js';
import { callerRead } from '../sessions/caller-query.js';

/** The advisory lock key of moving the default mark (any fixed number no other lock uses). */
const DEFAULT_LOCATION_LOCK = 7_210_021;

/** Every location, by priority, then code without regard to case (codes are unique so), beside the caller. */
export const locationsByPriority = callerRead<LocationRow, []>('locations.byPriority', (db) =>
  db.selectFrom('locations').selectAll().orderBy('priority').orderBy(sql`lower(code)`),
);

/** A location by id, beside the caller. */
export const locationById = callerRead<LocationRow, [string]>('locations.byId', (db, id) => db.selectFrom('locations').selectAll().where('id', '=', id));

export function lockLocation(trx: Transaction<Database>, id: string): Promise<LocationRow | undefined> {
  return trx.selectFrom('locations').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/**
 * The turn to move the default mark: one transaction at a time (a transaction-level advisory
 * lock, so it holds behind a pooler in transaction mode), taken before any location's row lock.
 * Without it, two moves that each lock their own row would both find the old default, the second
 * only after the first moved the mark away, and then meet the one-default index.
 */
export async function takeDefaultLocationTurn(trx: Transaction<Database>): Promise<void> {
  await sql`select pg_advisory_xact_lock(${DEFAULT_LOCATION_LOCK})`.execute(trx);
}

export function insertLocation(trx: Transaction<Database>, location: Pick<LocationRow, 'id' | 'code' | 'name' | 'priority' | 'status' | 'created_at' | 'updated_at'>): Promise<LocationRow> {
  return trx.insertInto('locations').values(location).returningAll().executeTakeFirstOrThrow();
}

/** Applies a change and moves `version` on by one; the caller has locked the row. */
export function updateLocation(
  trx: Transaction<Database>,
  id: string,
  change: Partial<Pick<LocationRow, 'code' | 'name' | 'priority' | 'status' | 'is_default'>>,
): Promise<LocationRow> {
  return trx
    .updateTable('locations')
    .set({ ...change, version: sql`version + 1`, updated_at: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Takes the default mark from whichever location holds it, but `keeping`; the rows it changed (none or one). */
export function clearDefaultLocation(trx: Transaction<Database>, keeping: string): Promise<LocationRow[]> {
  return trx
    .updateTable('locations')
    .set({ is_default: false, version: sql`version + 1`, updated_at: new Date() })
    .where('is_default', '=', true)
    .where('id', '<>', keeping)
    .returningAll()
    .execute();
}

export async function deleteLocation(trx: Transaction<Database>, id: string): Promise<void> {
  await trx.deleteFrom('locations').where('id', '=', id).execute();
}

