import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { countRows, keysetPage, type PageRequest } from '../db/list-queries.js';
import type { Database, LedgerRow } from '../db/tables.js';

export async function insertLedgerEntry(db: Kysely<Database>, entry: Omit<LedgerRow, 'id'>): Promise<void> {
  await db.insertInto('balance_ledger').values({ id: randomUUID(), ...entry }).execute();
}

/** A user's ledger, newest first, a page at a time. */
export function ledgerPage(db: Kysely<Database>, userId: string, page: PageRequest) {
  return keysetPage(db.selectFrom('balance_ledger').selectAll().where('user_id', '=', userId), page, 'newest-first');
}

/** A user's ledger, oldest first, a page at a time (a data export). */
export function ledgerOldestFirstPage(db: Kysely<Database>, userId: string, page: PageRequest) {
  return keysetPage(db.selectFrom('balance_ledger').selectAll().where('user_id', '=', userId), page, 'oldest-first');
}

export function countLedgerEntries(db: Kysely<Database>, userId: string): Promise<number> {
  return countRows(db.selectFrom('balance_ledger').where('user_id', '=', userId));
}
