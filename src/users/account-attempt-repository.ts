import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { AccountAttemptKind, Database } from '../db/tables.js';

export async function insertAccountAttempt(db: Kysely<Database>, kind: AccountAttemptKind, subject: string): Promise<string> {
  const id = randomUUID();
  await db.insertInto('account_attempts').values({ id, kind, subject, created_at: sql<Date>`now()` }).execute();
  return id;
}

export async function deleteAccountAttempt(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('account_attempts').where('id', '=', id).execute();
}

export async function deleteAccountAttempts(db: Kysely<Database>, kind: AccountAttemptKind, subject: string): Promise<void> {
  await db.deleteFrom('account_attempts').where('kind', '=', kind).where('subject', '=', subject).execute();
}

export interface AttemptWindow {
  count: number;
  /** Seconds since the oldest and the newest attempt of the window, by the database's clock. */
  oldestAgeSeconds: number | null;
  newestAgeSeconds: number | null;
}

/** The attempts of one kind and subject within the last `windowSeconds`. */
export async function countRecentAttempts(db: Kysely<Database>, kind: AccountAttemptKind, subject: string, windowSeconds: number): Promise<AttemptWindow> {
  const row = await db
    .selectFrom('account_attempts')
    .select([
      sql<string>`count(*)`.as('count'),
      sql<number | null>`extract(epoch from now() - min(created_at))`.as('oldest'),
      sql<number | null>`extract(epoch from now() - max(created_at))`.as('newest'),
    ])
    .where('kind', '=', kind)
    .where('subject', '=', subject)
    .where('created_at', '>', sql<Date>`now() - make_interval(secs => ${windowSeconds})`)
    .executeTakeFirstOrThrow();
  return {
    count: Number(row.count),
    oldestAgeSeconds: row.oldest === null ? null : Number(row.oldest),
    newestAgeSeconds: row.newest === null ? null : Number(row.newest),
  };
}

/** Attempts older than any window counts them: a day. */
export async function deleteStaleAccountAttempts(db: Kysely<Database>): Promise<number> {
  const result = await db.deleteFrom('account_attempts').where('created_at', '<', sql<Date>`now() - interval '1 day'`).executeTakeFirst();
  return Number(result.numDeletedRows);
}
