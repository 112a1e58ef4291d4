import type { Kysely } from 'kysely';
import { countRows, keysetPage, type PageRequest } from '../db/list-queries.js';
import type { Database, EventRow } from '../db/tables.js';

export interface EventFilter {
  types?: string[] | undefined;
  subjectId?: string | undefined;
  actorId?: string | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
}

function filteredEvents(db: Kysely<Database>, filter: EventFilter) {
  let query = db.selectFrom('events');
  if (filter.types && filter.types.length > 0) query = query.where('type', 'in', filter.types);
  if (filter.subjectId) query = query.where('subject_id', '=', filter.subjectId);
  if (filter.actorId) query = query.where('actor_id', '=', filter.actorId);
  if (filter.since) query = query.where('created_at', '>=', filter.since);
  if (filter.until) query = query.where('created_at', '<', filter.until);
  return query;
}

/** Newest first; a subject's, an actor's or a type's history walks its own (…, created_at, id) index. */
export function listEvents(db: Kysely<Database>, filter: EventFilter, page: PageRequest): Promise<EventRow[]> {
  return keysetPage(filteredEvents(db, filter).selectAll(), page, 'newest-first').execute();
}

export function countEvents(db: Kysely<Database>, filter: EventFilter): Promise<number> {
  return countRows(filteredEvents(db, filter));
}

export function findEventById(db: Kysely<Database>, id: string): Promise<EventRow | undefined> {
  return db.selectFrom('events').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Retention: events older than the cutoff go, and their deliveries with them. */
export async function deleteEventsBefore(db: Kysely<Database>, cutoff: Date): Promise<number> {
  const result = await db.deleteFrom('events').where('created_at', '<', cutoff).executeTakeFirst();
  return Number(result.numDeletedRows);
}
