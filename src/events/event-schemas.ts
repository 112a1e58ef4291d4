import { Type } from '@sinclair/typebox';
import { StringEnum, Timestamp } from '../http/common-schemas.js';
import { AUDITED_EVENT_TYPES, EVENT_TYPES } from './event-types.js';

export const EventTypeSchema = StringEnum([...EVENT_TYPES], { description: 'What happened.' });

export const EventSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    type: EventTypeSchema,
    occurred_at: Timestamp,
    actor_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: "Who made the change (a user's or an API client's id); null for the service's own." }),
    actor_type: Type.Union([StringEnum(['user', 'client']), Type.Null()], { description: "Whether the actor is a user or an API client; null with a null `actor_id` (the service's own change)." }),
    request_id: Type.Union([Type.String(), Type.Null()], { description: 'The X-Request-Id of the request that made the change.' }),
    subject_type: StringEnum(['user', 'variant', 'reservation', 'webhook', 'signing_key', 'client', 'import', 'location', 'identity_provider']),
    subject_id: Type.String({ format: 'uuid' }),
    data: Type.Record(Type.String(), Type.Unknown(), {
      description: '`before` and `after` of the fields the change altered, the movement of a balance or stock change, and any `reason`.',
    }),
  },
  {
    $id: 'Event',
    title: 'Event',
    examples: [
      {
        id: '5a1b2c3d-4e5f-4061-8273-94a5b6c7d8e9',
        type: 'user.status_changed',
        occurred_at: '2026-11-22T08:00:00.000Z',
        actor_id: '3f0c4e1a-8d5b-4c2e-9a71-2b6d0e5f4a13',
        actor_type: 'user',
        request_id: 'c1d2e3f4-0000-4000-8000-000000000001',
        subject_type: 'user',
        subject_id: '7b1d2c3e-4f50-4a6b-8c7d-9e0f1a2b3c4d',
        data: { before: { status: 'active' }, after: { status: 'suspended' }, reason: 'Chargeback under review' },
      },
    ],
  },
);

const TYPE_ALTERNATIVES = AUDITED_EVENT_TYPES.map((type) => type.replace('.', '\\.')).join('|');

export const ListEventsQuery = Type.Object(
  {
    type: Type.Optional(
      Type.String({
        pattern: `^(${TYPE_ALTERNATIVES})(,(${TYPE_ALTERNATIVES}))*$`,
        'x-pattern-message': `must be event types separated by commas: ${AUDITED_EVENT_TYPES.join(', ')}`,
        description: 'Comma-separated event types.',
        examples: ['user.role_changed,user.status_changed'],
      }),
    ),
    subject_id: Type.Optional(Type.String({ format: 'uuid', description: 'Only events about this user, variant, reservation or webhook.' })),
    actor_id: Type.Optional(Type.String({ format: 'uuid', description: 'Only changes made by this user or API client.' })),
    actor_type: Type.Optional(StringEnum(['user', 'client'], { description: 'Only changes made by users, or by API clients.' })),
    since: Type.Optional(Type.String({ format: 'date-time', description: 'Inclusive.' })),
    until: Type.Optional(Type.String({ format: 'date-time', description: 'Exclusive.' })),
  },
  { additionalProperties: false },
);
