import type { Static } from '@sinclair/typebox';
import type { EventRow } from '../db/tables.js';
import type { EventSchema } from './event-schemas.js';
import type { EventType, SubjectType } from './event-types.js';

/** The event as the audit API and webhook deliveries show it. */
export function toEventResponse(row: EventRow): Static<typeof EventSchema> {
  return {
    id: row.id,
    type: row.type as EventType,
    occurred_at: row.created_at.toISOString(),
    actor_id: row.actor_id,
    actor_type: row.actor_type,
    request_id: row.request_id,
    subject_type: row.subject_type as SubjectType,
    subject_id: row.subject_id,
    data: row.data,
  };
}
