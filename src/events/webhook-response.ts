import type { Static } from '@sinclair/typebox';
import type { WebhookRow } from '../db/tables.js';
import type { WebhookSchema } from './webhook-schemas.js';
import type { DeliveryWithType } from './webhook-repository.js';

/** A webhook as the API shows it: never its secret (only the 201 of its creation does). */
export function toWebhookResponse(row: WebhookRow) {
  return {
    id: row.id,
    url: row.url,
    // Stored only after the request's schema checked each against the event types.
    events: row.events as Static<typeof WebhookSchema>['events'],
    description: row.description,
    enabled: row.enabled,
    version: row.version,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export function toDeliveryResponse(row: DeliveryWithType) {
  return {
    id: row.id,
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status,
    attempts: row.attempts,
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    next_attempt_at: row.status === 'pending' ? new Date(row.next_attempt_at).toISOString() : null,
    created_at: new Date(row.created_at).toISOString(),
    delivered_at: row.delivered_at ? new Date(row.delivered_at).toISOString() : null,
  };
}
