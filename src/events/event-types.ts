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
  'user.mfa_factor_added',
  'user.mfa_factor_removed',
  'user.mfa_reset',
  'user.recovery_codes_generated',
  'user.recovery_code_used',
  'user.data_exported',
  'user.erased',
  'user.app_authorized',
  'user.app_revoked',
  'user.identity_linked',
  'user.identity_unlinked',
  'variant.created',
  'variant.updated',
  'variant.deleted',
  'variant.stock_changed',
  'reservation.created',
  'reservation.committed',
  'reservation.released',
  'reservation.expired',
  'reservation.reallocated',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'webhook.disabled',
  'webhook.ping',
  'signing_key.rotated',
  'client.created',
  'client.updated',
  'client.deleted',
  'client.secret_created',
  'client.secret_deleted',
  'import.finished',
  'location.created',
  'location.updated',
  'location.deleted',
  'identity_provider.created',
  'identity_provider.updated',
  'identity_provider.deleted',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** `webhook.ping` goes only to the webhook pinged, and is not kept in the audit log. */
export const UNAUDITED_EVENT_TYPES: readonly EventType[] = ['webhook.ping'];
/** What a webhook may subscribe to, and what the audit log shows. */
export const AUDITED_EVENT_TYPES = EVENT_TYPES.filter((type) => !UNAUDITED_EVENT_TYPES.includes(type));
export type SubjectType = 'user' | 'variant' | 'reservation' | 'webhook' | 'signing_key' | 'client' | 'import' | 'location' | 'identity_provider';
