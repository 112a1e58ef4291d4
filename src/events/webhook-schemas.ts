import { Type } from '@sinclair/typebox';
import { StringEnum, Timestamp, TrimmedText } from '../http/common-schemas.js';
import { AUDITED_EVENT_TYPES } from './event-types.js';

const Url = Type.String({
  minLength: 1,
  maxLength: 2000,
  description:
    'Where deliveries go: an https:// URL (http:// too with WEBHOOK_ALLOW_HTTP=true) whose host resolves only to global unicast ' +
    "addresses: no IPv6 address outside 2000::/3, nor any range IANA's special-purpose registries mark not globally reachable; " +
    'loopback, private, link-local and unspecified addresses are allowed with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true. Checked again at every delivery.',
  examples: ['https://hooks.example.com/shop'],
});
const Subscriptions = Type.Array(StringEnum(['*', ...AUDITED_EVENT_TYPES]), {
  minItems: 1,
  maxItems: 50,
  uniqueItems: true,
  description: 'Event types to deliver, or `["*"]` for all.',
  examples: [['user.status_changed', 'variant.updated']],
});
const Description = TrimmedText(500, { description: 'What the webhook is for', examples: ['Search index'] });

export const WebhookSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    url: Type.String(),
    events: Type.Array(StringEnum(['*', ...AUDITED_EVENT_TYPES]), { description: 'The event types it is sent, or `["*"]` for all.' }),
    description: Type.Union([Type.String(), Type.Null()]),
    enabled: Type.Boolean(),
    version: Type.Integer(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  {
    $id: 'Webhook',
    title: 'Webhook',
    examples: [
      {
        id: '9c8b7a6f-5e4d-4c3b-8a29-18f7e6d5c4b3',
        url: 'https://hooks.example.com/shop',
        events: ['user.status_changed'],
        description: 'Search index',
        enabled: true,
        version: 1,
        created_at: '2026-11-22T08:00:00.000Z',
        updated_at: '2026-11-22T08:00:00.000Z',
      },
    ],
  },
);

export const CreatedWebhookSchema = Type.Composite([
  Type.Omit(WebhookSchema, []),
  Type.Object({
    secret: Type.String({ description: 'Shown once: `whsec_` and the base64 of 32 random bytes; signs every delivery (Standard Webhooks).' }),
  }),
]);

export const CreateWebhookBody = Type.Object(
  { url: Url, events: Subscriptions, description: Type.Optional(Description) },
  { additionalProperties: false, examples: [{ url: 'https://hooks.example.com/shop', events: ['*'], description: 'Search index' }] },
);

export const UpdateWebhookBody = Type.Object(
  { url: Url, events: Subscriptions, description: Type.Optional(Description), enabled: Type.Boolean() },
  { additionalProperties: false, examples: [{ url: 'https://hooks.example.com/shop', events: ['variant.updated'], enabled: true }] },
);

export const DeliverySchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    event_id: Type.String({ format: 'uuid' }),
    event_type: Type.String(),
    status: StringEnum(['pending', 'succeeded', 'failed']),
    attempts: Type.Integer(),
    last_status_code: Type.Union([Type.Integer(), Type.Null()]),
    last_error: Type.Union([Type.String(), Type.Null()]),
    next_attempt_at: Type.Union([Timestamp, Type.Null()], { description: 'When the next attempt is due; null once it succeeded or failed for good.' }),
    created_at: Timestamp,
    delivered_at: Type.Union([Timestamp, Type.Null()]),
  },
  { $id: 'WebhookDelivery', title: 'Webhook delivery' },
);
