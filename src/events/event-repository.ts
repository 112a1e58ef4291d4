import { sql, type Kysely, type Transaction } from 'kysely';
import { countRows, everyRow, keysetPage, type PageRequest } from '../db/list-queries.js';
import type { Database, EventRow } from '../db/tables.js';
import { callerRead } from '../sessions/caller-query.js';
import { UNAUDITED_EVENT_TYPES } from './event-types.js';
import { withoutPersonalValues } from './personal-data.js';

export interface EventFilter {
  types?: string[] | undefined;
  subjectId?: string | undefined;
  actorId?: string | undefined;
  actorType?: 'user' | 'client' | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
}

/** The audit log: every event but those only sent to a webhook (a ping). */
function filteredEvents(db: Kysely<Database>, filter: EventFilter) {
  let query = db.selectFrom('events').where('type', 'not in', [...UNAUDITED_EVENT_TYPES]);
  if (filter.types && filter.types.length > 0) query = query.where('type', 'in', filter.types);
  if (filter.subjectId) query = query.where('subject_id', '=', filter.subjectId);
  if (filter.actorId) query = query.where('actor_id', '=', filter.actorId);
  if (filter.actorType) query = query.where('actor_type', '=', filter.actorType);
  if (filter.since) query = query.where('created_at', '>=', filter.since);
  if (filter.until) query = query.where('created_at', '<', filter.until);
  return query;
}

/** Newest first; a subject's, an actor's or a type's history walks its own (…, created_at, id) index. */
export function eventsPage(db: Kysely<Database>, filter: EventFilter, page: PageRequest) {
  return keysetPage(filteredEvents(db, filter).selectAll(), page, 'newest-first');
}

export function countEvents(db: Kysely<Database>, filter: EventFilter): Promise<number> {
  return countRows(filteredEvents(db, filter));
}

/** An event of the audit log by id, beside the caller. */
export const eventById = callerRead<EventRow, [string]>('events.byId', (db, id) => db.selectFrom('events').selectAll().where('id', '=', id).where('type', 'not in', [...UNAUDITED_EVENT_TYPES]));

/** Retention: events older than the cutoff go, and their deliveries with them. */
export async function deleteEventsBefore(db: Kysely<Database>, cutoff: Date): Promise<number> {
  const result = await db.deleteFrom('events').where('created_at', '<', cutoff).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** The events about a subject, oldest first, a page at a time (a data export). */
export function subjectEventsPage(db: Kysely<Database>, subjectId: string, page: PageRequest): Promise<EventRow[]> {
  return keysetPage(filteredEvents(db, { subjectId }).selectAll(), page, 'oldest-first').execute();
}

/** The events an actor recorded about other subjects, oldest first, a page at a time (a data export). */
export function actorEventsAboutOthersPage(db: Kysely<Database>, actorId: string, page: PageRequest): Promise<EventRow[]> {
  return keysetPage(filteredEvents(db, { actorId }).selectAll().where('subject_id', '!=', actorId), page, 'oldest-first').execute();
}

/**
 * An erasure's part of the audit log: in every event about the subject, each email, name and
 * phone value becomes "[erased]" (personal-data.ts); types, times, actors and amounts stay.
 * Deliveries not yet sent build their body from the event when they send, so they send the
 * scrubbed one. Returns the email addresses it erased.
 */
export async function erasePersonalValues(trx: Transaction<Database>, subjectId: string): Promise<Set<string>> {
  const emails = new Set<string>();
  const pageOf = (page: PageRequest) => keysetPage(trx.selectFrom('events').selectAll().where('subject_id', '=', subjectId), page, 'oldest-first').execute();
  let batch: { id: string; data: string }[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const rows = sql.join(batch.map((row) => sql`(${row.id}::uuid, ${row.data}::jsonb)`));
    await sql`update events set data = scrubbed.data from (values ${rows}) as scrubbed (id, data) where events.id = scrubbed.id`.execute(trx);
    batch = [];
  };
  for await (const event of everyRow(pageOf)) {
    const before = JSON.stringify(event.data);
    const after = JSON.stringify(withoutPersonalValues(event.data, emails));
    if (after !== before) batch.push({ id: event.id, data: after });
    if (batch.length >= 500) await flush();
  }
  await flush();
  return emails;
}
