/** Every type of event the service records (docs/api.md, The audit log); webhooks subscribe to these. */
export const EVENT_TYPES = [
  'user.registered',
  'user.updated',
  'user.email_verified',
  'user.password_changed',
  'user.password_reset',
  'user.role_changed',
  'user.status_changed',
  'user.deleted',
  'user.balance_changed',
  'user.sessions_ended',
  'variant.created',
  'variant.updated',
  'variant.deleted',
  'variant.stock_changed',
  'reservation.created',
  'reservation.committed',
  'reservation.released',
  'reservation.expired',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'webhook.disabled',
  'signing_key.rotated',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];
export type SubjectType = 'user' | 'variant' | 'reservation' | 'webhook' | 'signing_key';
