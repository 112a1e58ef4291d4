import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database, EventRow } from '../db/tables.js';
import type { EventType, SubjectType } from './event-types.js';

/** Who made a change, and in which request: null for the service's own changes (expiry, rotation). */
export interface EventContext {
  actorId: string | null;
  requestId: string | null;
}

export const SERVICE_CONTEXT: EventContext = { actorId: null, requestId: null };

/** The context of a change made by an authenticated request (or, for registration, by its new user). */
export function contextOf(request: { id: string; caller?: { id: string } | undefined; identity?: { userId: string } | undefined }, actorId?: string): EventContext {
  // Before a route's first query has carried the caller check, the caller is the token's subject.
  return { actorId: actorId ?? request.caller?.id ?? request.identity?.userId ?? null, requestId: request.id };
}

export interface NewEvent {
  type: EventType;
  subjectType: SubjectType;
  subjectId: string;
  data: Record<string, unknown>;
}

// Whatever a caller puts in `data`, these never reach the audit log or a webhook.
const SECRET_KEY = /password|hash|token|secret/i;

function withoutSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSecrets);
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Date) return value.toISOString();
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !SECRET_KEY.test(key))
      .map(([key, child]) => [key, withoutSecrets(child)]),
  );
}

/**
 * Records one event in the transaction of the change it describes, so it exists exactly when
 * the change committed, and queues its delivery to every enabled webhook subscribed to its type
 * (the outbox): a crash between commit and send loses nothing.
 */
export async function record(trx: Kysely<Database>, event: NewEvent, context: EventContext): Promise<EventRow> {
  const now = new Date();
  const row = await trx
    .insertInto('events')
    .values({
      id: randomUUID(),
      type: event.type,
      created_at: now,
      actor_id: context.actorId,
      request_id: context.requestId,
      subject_type: event.subjectType,
      subject_id: event.subjectId,
      data: JSON.stringify(withoutSecrets(event.data)),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await sql`
    insert into webhook_deliveries (id, webhook_id, event_id, status, attempts, next_attempt_at, created_at)
    select gen_random_uuid(), id, ${row.id}, 'pending', 0, ${now}, ${now}
    from webhooks
    where enabled and (${event.type} = any(events) or '*' = any(events))`.execute(trx);
  return row;
}

/** `before` and `after` of the fields a change altered (and nothing else). */
export function changedFields<Row extends object>(before: Row, after: Row, fields: (keyof Row & string)[]) {
  const changed = fields.filter((field) => JSON.stringify(before[field]) !== JSON.stringify(after[field]));
  return {
    before: Object.fromEntries(changed.map((field) => [field, before[field]])),
    after: Object.fromEntries(changed.map((field) => [field, after[field]])),
  };
}
