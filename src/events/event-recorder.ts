import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { Database, EventRow } from '../db/tables.js';
import type { EventType, SubjectType } from './event-types.js';
import { activeTraceparent } from '../tracing.js';

/** Who made a change, and in which request: null for the service's own changes (expiry, rotation). */
export interface EventContext {
  actorId: string | null;
  /** A user's change unless said otherwise (an API client's: 'client'). */
  actorType?: 'user' | 'client';
  requestId: string | null;
}

export const SERVICE_CONTEXT: EventContext = { actorId: null, requestId: null };

/**
 * The context of a change made by a request: its caller (the credentials' subject, which the
 * admission checks before anything is written), or, on a public route, the actor given
 * (registration: its new user; a logout: the session's user).
 */
export function contextOf(request: { id: string; access?: { actor: { type: 'user' | 'client'; id: string } | undefined } | undefined }, actorId?: string): EventContext {
  if (actorId) return { actorId, actorType: 'user', requestId: request.id };
  const actor = request.access?.actor;
  return { actorId: actor?.id ?? null, ...(actor ? { actorType: actor.type } : {}), requestId: request.id };
}

export interface NewEvent {
  type: EventType;
  subjectType: SubjectType;
  subjectId: string;
  data: Record<string, unknown>;
}

// Whatever a caller puts in `data`, these never reach the audit log or a webhook.
const SECRET_KEY = /password|hash|token|secret/i;
// Names that read like a secret's but hold a setting: an app's ID token algorithm (`RS256`), never a token.
const NOT_SECRET_KEYS: ReadonlySet<string> = new Set(['id_token_signed_response_alg']);

function withoutSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSecrets);
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Date) return value.toISOString();
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => NOT_SECRET_KEYS.has(key) || !SECRET_KEY.test(key))
      .map(([key, child]) => [key, withoutSecrets(child)]),
  );
}

/** The columns of an event row that its context gives: its actor, request and trace. */
function contextColumns(context: EventContext) {
  return {
    actor_id: context.actorId,
    actor_type: context.actorId === null ? null : (context.actorType ?? 'user'),
    request_id: context.requestId,
    trace_parent: activeTraceparent(),
  };
}

/** The columns of an event row that the event itself gives: a new id, its type, subject and data without secrets. */
function givenColumns(event: NewEvent) {
  return {
    id: randomUUID(),
    type: event.type,
    subject_type: event.subjectType,
    subject_id: event.subjectId,
    data: JSON.stringify(withoutSecrets(event.data)),
  };
}

/** The row of an event as it is stored: its actor and request from the context, its data without secrets. */
function eventRow(event: NewEvent, context: EventContext, now: Date) {
  return { ...givenColumns(event), created_at: now, ...contextColumns(context) };
}

/**
 * Records one event in the transaction of the change it describes, so it exists exactly when
 * the change committed, and queues its delivery to every enabled webhook subscribed to its type
 * (the outbox): a crash between commit and send loses nothing. `onlyTo` sends it to that one
 * webhook instead, whatever it subscribes to (a ping).
 */
export async function record(trx: Transaction<Database>, event: NewEvent, context: EventContext, onlyTo?: { webhookId: string }): Promise<EventRow> {
  const now = new Date();
  const row = eventRow(event, context, now);
  const subscribers = onlyTo ? sql`webhooks.id = ${onlyTo.webhookId}` : sql`webhooks.enabled and (${event.type} = any(webhooks.events) or '*' = any(webhooks.events))`;
  // One statement for the event and its deliveries: a write that records an event as its last
  // step (a reservation's commit, under the variant's lock) waits for one round trip, not two.
  const { rows } = await sql<EventRow>`
    with recorded as (
      insert into events (id, type, created_at, actor_id, actor_type, request_id, subject_type, subject_id, data, trace_parent)
      values (${row.id}, ${row.type}, ${now}, ${row.actor_id}, ${row.actor_type}, ${row.request_id}, ${row.subject_type}, ${row.subject_id}, ${row.data}::jsonb, ${row.trace_parent})
      returning *),
    queued as (
      insert into webhook_deliveries (id, webhook_id, event_id, status, attempts, next_attempt_at, created_at)
      select gen_random_uuid(), webhooks.id, ${row.id}, 'pending', 0, ${now}, ${now}
      from webhooks
      where ${subscribers})
    select * from recorded`.execute(trx);
  return rows[0]!;
}

/**
 * Records many events at once in the transaction of their change (an import's batch, the release
 * or expiry of reservations): one statement for the events and the deliveries of each to the
 * webhooks its type reaches. The same rows `record` would write, in one round trip. They share
 * one `created_at`, so a list orders them by id.
 */
export async function recordMany(trx: Transaction<Database>, events: NewEvent[], context: EventContext): Promise<void> {
  if (events.length === 0) return;
  await sql`with ${recordingSteps(events, [], context)} select 1`.execute(trx);
}

/**
 * An event that a statement makes of a row it writes, its subject and data computed in SQL from
 * that row (a commit's `variant.stock_changed`, from the variant's row as its update left it).
 */
export interface EventOfRow {
  type: EventType;
  subjectType: SubjectType;
  /** The statement's step (a CTE) that returns the row, which the two expressions below read. */
  step: string;
  subjectId: RawBuilder<unknown>;
  /** A jsonb; nothing secret in it (unlike `NewEvent.data`, not filtered). */
  data: RawBuilder<unknown>;
}

/**
 * The steps of a statement's `with` that record `events` and the events `ofRows` makes of the
 * rows the statement writes, with the deliveries of each (the rows recordMany writes). A change
 * that takes a hot row's lock records its events in the statement that takes the lock, so the
 * lock is held for that statement and the commit only (a reservation's commit).
 */
export function recordingSteps(events: NewEvent[], ofRows: EventOfRow[], context: EventContext): RawBuilder<unknown> {
  const now = new Date();
  // The columns shared by every row once; the others a row each. A VALUES list, not arrays to
  // unnest: PostgreSQL then estimates the rows as they are, and plans the statement once for each
  // number of events (a generic plan), where an array's unknown length kept it planning anew.
  const { actor_id, actor_type, request_id, trace_parent } = contextColumns(context);
  const given = events.map(givenColumns).map((row) => sql`(${row.id}::uuid, ${row.type}::text, ${row.subject_type}::text, ${row.subject_id}::uuid, ${row.data}::jsonb)`);
  const made = ofRows.map((event) => sql`select gen_random_uuid(), ${event.type}::text, ${event.subjectType}::text, ${event.subjectId}, ${event.data} from ${sql.table(event.step)}`);
  const parts = [...(given.length > 0 ? [sql`values ${sql.join(given)}`] : []), ...made];
  return sql`
    recorded as (
      insert into events (id, type, created_at, actor_id, actor_type, request_id, subject_type, subject_id, data, trace_parent)
      select id, type, ${now}, ${actor_id}, ${actor_type}, ${request_id}, subject_type, subject_id, data, ${trace_parent}
      from (${parts.length > 0 ? sql.join(parts, sql` union all `) : sql`select null::uuid, null::text, null::text, null::uuid, null::jsonb where false`}) as given (id, type, subject_type, subject_id, data)
      returning id, type),
    queued as (
      insert into webhook_deliveries (id, webhook_id, event_id, status, attempts, next_attempt_at, created_at)
      select gen_random_uuid(), webhooks.id, recorded.id, 'pending', 0, ${now}, ${now}
      from recorded
      join webhooks on webhooks.enabled and (recorded.type = any(webhooks.events) or '*' = any(webhooks.events)))`;
}

/** `before` and `after` of the fields a change altered (and nothing else). */
export function changedFields<Row extends object>(before: Row, after: Row, fields: (keyof Row & string)[]) {
  const changed = fields.filter((field) => JSON.stringify(before[field]) !== JSON.stringify(after[field]));
  return {
    before: Object.fromEntries(changed.map((field) => [field, before[field]])),
    after: Object.fromEntries(changed.map((field) => [field, after[field]])),
  };
}
