import { Type, type TSchema } from '@sinclair/typebox';
import { StringEnum } from '../http/common-schemas.js';
import { EventSchema } from './event-schemas.js';
import { EVENT_TYPES, type EventType } from './event-types.js';

/**
 * The body a webhook receives for each event type: the event as the audit log shows it, with
 * the `data` that type carries. These are the OpenAPI document's `webhooks` (one entry per
 * type) and docs/api.md's table; the test in test/events/webhook-payloads.test.ts checks that
 * the events the service records match them.
 */
const changed = (fields: string) =>
  Type.Object({ before: Type.Record(Type.String(), Type.Unknown()), after: Type.Record(Type.String(), Type.Unknown()) }, { description: `\`before\` and \`after\` hold only the fields that changed, of ${fields}.` });
const reason = Type.Optional(Type.String({ description: 'The reason given with the change.' }));
const sessionIds = Type.Array(Type.String({ format: 'uuid' }));
const importId = Type.Optional(Type.String({ format: 'uuid', description: 'Present when an import made the change.' }));
const factor = { factor_id: Type.String({ format: 'uuid' }), type: StringEnum(['totp', 'webauthn']), name: Type.String() };
const keyOfClient = Type.Object({ id: Type.String({ format: 'uuid' }), prefix: Type.String() });
const profile = Type.Object({ email: Type.String(), email_verified: Type.Boolean(), name: Type.String(), phone: Type.Union([Type.String(), Type.Null()]) });
const variantFields = Type.Object({
  product_id: Type.String(),
  sku: Type.String(),
  name: Type.String(),
  price: Type.Integer(),
  attributes: Type.Record(Type.String(), Type.String()),
  stock: Type.Integer(),
});
const webhookSettings = Type.Object({ url: Type.String({ description: "The URL's origin only." }), events: Type.Array(Type.String()), description: Type.Union([Type.String(), Type.Null()]), enabled: Type.Boolean() });
const clientSettings = Type.Object({
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  type: StringEnum(['service', 'confidential', 'public']),
  scopes: Type.Array(Type.String()),
  status: Type.String(),
  rate_limit: Type.Union([Type.Integer(), Type.Null()]),
  redirect_uris: Type.Array(Type.String(), { description: "An app's; `[]` for a service client." }),
  post_logout_redirect_uris: Type.Array(Type.String(), { description: "An app's; `[]` for a service client." }),
  first_party: Type.Boolean({ description: 'False for a service client.' }),
  logo_uri: Type.Union([Type.String(), Type.Null()]),
  id_token_signed_response_alg: Type.Union([StringEnum(['RS256', 'EdDSA']), Type.Null()], { description: 'Null for a service client.' }),
});
const locationSettings = Type.Object({
  code: Type.String(),
  name: Type.String(),
  priority: Type.Integer(),
  status: StringEnum(['active', 'inactive']),
  is_default: Type.Boolean(),
});
const providerSettings = Type.Object(
  {
    name: Type.String(),
    issuer: Type.String(),
    client_id: Type.String(),
    scopes: Type.Array(Type.String()),
    button_label: Type.String(),
    link_by_verified_email: Type.Boolean(),
    enabled: Type.Boolean(),
    apple_team_id: Type.Union([Type.String(), Type.Null()]),
    apple_key_id: Type.Union([Type.String(), Type.Null()]),
  },
  { description: 'The settings, never a credential (client_secret, apple_private_key).' },
);
const identityLink = Type.Object({ provider_id: Type.String({ format: 'uuid' }), identity_id: Type.String({ format: 'uuid' }) });
const lines = Type.Array(Type.Object({ variant_id: Type.String({ format: 'uuid' }), quantity: Type.Integer() }));
const statusChange = (from: string, to: string) => Type.Object({ before: Type.Object({ status: Type.Literal(from) }), after: Type.Object({ status: Type.Literal(to) }) });
const allocatedLines = Type.Array(
  Type.Object({ variant_id: Type.String({ format: 'uuid' }), allocations: Type.Array(Type.Object({ location_id: Type.String({ format: 'uuid' }), quantity: Type.Integer() })) }),
  { description: 'The lines the reallocation named, each with where it holds its units.' },
);
const closing = (status: string) => Type.Intersect([statusChange('active', status), Type.Object({ lines, reference: Type.Union([Type.String(), Type.Null()]) })]);

const DATA: Record<EventType, { summary: string; data: TSchema }> = {
  'user.registered': {
    summary: 'A user registered, or staff or the service created one.',
    data: Type.Object({
      after: Type.Intersect([profile, Type.Object({ role: Type.String(), status: Type.String() })]),
      method: Type.Optional(
        StringEnum(['email_code', 'federation'], {
          description:
            'Present when the account was made by signing in: with an email code (`email_code`, API.md section 19) or with another identity provider (`federation`, section 20); absent for a registration with a password.',
        }),
      ),
    }),
  },
  'user.updated': { summary: "A user's profile changed.", data: changed('email, email_verified, name and phone') },
  'user.email_verified': { summary: 'A user confirmed an email address.', data: Type.Object({ before: Type.Object({ email_verified: Type.Literal(false) }), after: Type.Object({ email_verified: Type.Literal(true) }), email: Type.String() }) },
  'user.password_changed': { summary: 'A user changed their password; their other sessions ended.', data: Type.Object({ sessions_ended: Type.Literal(true) }) },
  'user.password_reset': { summary: 'A password was set through a reset link; every session ended.', data: Type.Object({ sessions_ended: Type.Integer({ description: 'How many sessions ended.' }) }) },
  'user.role_changed': { summary: "A user's role changed.", data: Type.Intersect([changed('role'), Type.Object({ reason })]) },
  'user.status_changed': { summary: 'A user was suspended or reactivated.', data: Type.Intersect([changed('status'), Type.Object({ reason, sessions_ended: Type.Optional(Type.Literal(true)) })]) },
  'user.deleted': { summary: 'A user was deleted (the account can no longer sign in).', data: Type.Object({ before: profile, sessions_ended: Type.Literal(true), reason }) },
  'user.balance_changed': {
    summary: "A user's store credit changed.",
    data: Type.Object({
      before: Type.Object({ balance: Type.Integer() }),
      after: Type.Object({ balance: Type.Integer() }),
      delta: Type.Integer(),
      balance_after: Type.Integer(),
      currency: Type.String(),
      reason: Type.String(),
    }),
  },
  'user.sessions_ended': { summary: "Some of a user's sessions were ended.", data: Type.Object({ cause: StringEnum(['logout', 'sign_out', 'admin_sign_out', 'refresh_reuse', 'code_reuse'], { description: 'A logout, the user signing out sessions, an admin signing them out, a spent refresh token presented again, or a spent authorization code presented again (the session its exchange started ends).' }), session_ids: sessionIds }) },
  'user.mfa_factor_added': { summary: 'A user confirmed a second factor.', data: Type.Object(factor) },
  'user.mfa_factor_removed': { summary: 'A user removed a second factor.', data: Type.Object({ ...factor, session_ids_ended: sessionIds }) },
  'user.mfa_reset': { summary: "An admin removed every second factor of a user.", data: Type.Object({ factors_removed: Type.Array(Type.Object({ id: Type.String({ format: 'uuid' }), type: factor.type, name: Type.String() })), session_ids_ended: sessionIds }) },
  'user.recovery_codes_generated': { summary: 'A new set of recovery codes replaced the old one.', data: Type.Object({ count: Type.Integer() }) },
  'user.recovery_code_used': { summary: 'A recovery code was used.', data: Type.Object({ recovery_codes_left: Type.Integer() }) },
  'user.data_exported': { summary: "A user's data were exported.", data: Type.Object({}) },
  'user.erased': { summary: "A user's personal data were erased.", data: Type.Object({ reason: Type.Union([Type.String(), Type.Null()]) }) },
  'user.app_authorized': {
    summary: 'A user allowed a third-party app the scopes named, on the consent page.',
    data: Type.Object({ client_id: Type.String({ format: 'uuid' }), scopes: Type.Array(Type.String(), { description: 'As granted, `openid` included.' }) }),
  },
  'user.app_revoked': {
    summary: "A user withdrew an app's consent; the app's sessions for the user ended.",
    data: Type.Object({ client_id: Type.String({ format: 'uuid' }), scopes: Type.Array(Type.String(), { description: 'The scopes the consent held.' }) }),
  },
  'user.identity_linked': { summary: 'An identity at another provider was linked to the user (its first sign-in there, or the profile\'s Connect).', data: identityLink },
  'user.identity_unlinked': { summary: 'The user unlinked an identity at another provider.', data: identityLink },
  'variant.created': { summary: 'A variant was created.', data: Type.Object({ after: variantFields, import_id: importId }) },
  'variant.updated': { summary: "A variant's fields changed (stock has its own event).", data: Type.Intersect([changed('product_id, sku, name, price and attributes'), Type.Object({ import_id: importId })]) },
  'variant.deleted': { summary: 'A variant was deleted.', data: Type.Object({ before: variantFields }) },
  'variant.stock_changed': {
    summary: "A variant's stock (and, for a commit, its reserved units) changed.",
    data: Type.Object({
      before: Type.Object({ stock: Type.Integer(), reserved: Type.Optional(Type.Integer()) }),
      after: Type.Object({ stock: Type.Integer(), reserved: Type.Optional(Type.Integer()) }),
      delta: Type.Integer(),
      stock_after: Type.Integer(),
      reason: Type.String(),
      reference: Type.Union([Type.String(), Type.Null()]),
      import_id: importId,
    }),
  },
  'reservation.created': {
    summary: 'Units were reserved.',
    data: Type.Object({ after: Type.Object({ status: Type.Literal('active'), lines, reference: Type.Union([Type.String(), Type.Null()]), expires_at: Type.String({ format: 'date-time' }) }) }),
  },
  'reservation.committed': { summary: 'A reservation was committed: its units left the stock.', data: closing('committed') },
  'reservation.released': { summary: 'A reservation was released: its units are available again.', data: closing('released') },
  'reservation.expired': { summary: 'A reservation expired: its units are available again.', data: closing('expired') },
  'reservation.reallocated': {
    summary: 'Some lines of an active reservation now hold their units at other locations (API.md section 21 names no event for it; this one is the nearest to the others).',
    data: Type.Object({ before: Type.Object({ lines: allocatedLines }), after: Type.Object({ lines: allocatedLines }), reference: Type.Union([Type.String(), Type.Null()]) }),
  },
  'webhook.created': { summary: 'A webhook was created.', data: Type.Object({ after: webhookSettings }) },
  'webhook.updated': { summary: 'A webhook was changed (enabled included).', data: changed('url, events, description and enabled') },
  'webhook.deleted': { summary: 'A webhook was deleted.', data: Type.Object({ before: webhookSettings }) },
  'webhook.disabled': {
    summary: 'The service disabled a webhook whose deliveries all failed for 3 days.',
    data: Type.Object({ before: Type.Object({ enabled: Type.Literal(true) }), after: Type.Object({ enabled: Type.Literal(false) }), failing_since: Type.String({ format: 'date-time' }) }),
  },
  'webhook.ping': { summary: 'A test sent by POST /api/webhooks/{id}/ping to that webhook alone (not in the audit log).', data: Type.Object({ webhook_id: Type.String({ format: 'uuid' }) }) },
  'signing_key.rotated': { summary: 'A signing key was rotated: the Ed25519 key and the RSA key (of ID tokens) rotate together, one event each, named by the new kid.', data: Type.Object({ before: Type.Object({ kid: Type.Union([Type.String(), Type.Null()]) }), after: Type.Object({ kid: Type.String() }) }) },
  'client.created': { summary: 'An API client was created.', data: Type.Object({ after: clientSettings, first_key: Type.Optional(Type.Object(keyOfClient.properties, { description: 'Its first secret; absent for a public app, which has no secret.' })) }) },
  'client.updated': { summary: 'An API client was changed (disabled included).', data: changed('name, description, scopes, status, rate_limit, and an app\'s redirect_uris, post_logout_redirect_uris, first_party, logo_uri and id_token_signed_response_alg') },
  'client.deleted': { summary: 'An API client was deleted.', data: Type.Object({ before: clientSettings }) },
  'client.secret_created': { summary: 'An API client got a new secret.', data: Type.Object({ key: keyOfClient, others_expire_in: Type.Union([Type.Integer(), Type.Null()]) }) },
  'client.secret_deleted': { summary: "An API client's secret was deleted.", data: Type.Object({ key: keyOfClient }) },
  'location.created': { summary: 'A location was created.', data: Type.Object({ after: locationSettings }) },
  'location.updated': {
    summary: 'A location was changed; when the default moves, each of the two locations records its own (is_default true on one, false on the other).',
    data: changed('code, name, priority, status and is_default'),
  },
  'location.deleted': { summary: 'A location was deleted.', data: Type.Object({ before: locationSettings }) },
  'identity_provider.created': { summary: 'An identity provider was connected.', data: Type.Object({ after: providerSettings }) },
  'identity_provider.updated': {
    summary: 'An identity provider was changed (enabled included).',
    data: Type.Intersect([
      changed('name, issuer, client_id, scopes, button_label, link_by_verified_email, enabled, apple_team_id and apple_key_id'),
      Type.Object({ credentials_changed: Type.Boolean({ description: 'Whether a credential (client_secret or apple_private_key) was written; never its value.' }) }),
    ]),
  },
  'identity_provider.deleted': {
    summary: 'An identity provider was deleted, with every identity linked through it.',
    data: Type.Object({ before: providerSettings, identities_removed: Type.Integer({ description: 'How many identities went with it.' }) }),
  },
  'import.finished': {
    summary: 'A variant import finished (succeeded, failed or cancelled).',
    data: Type.Object({ status: Type.String(), rows_total: Type.Integer(), created: Type.Integer(), updated: Type.Integer(), unchanged: Type.Integer(), failed: Type.Integer() }),
  },
};

/** The webhook body of one event type: the Event with that `type` and its `data`. */
export function webhookPayloadSchema(type: EventType): TSchema {
  const { $id: _id, title: _title, examples: _examples, ...event } = EventSchema as TSchema & { properties: Record<string, TSchema> };
  return { ...event, title: `Event ${type}`, properties: { ...event.properties, type: Type.Literal(type), data: DATA[type].data } } as TSchema;
}

const HEADERS = [
  ['webhook-id', 'The event id: the same on every attempt; ignore a repeat.'],
  ['webhook-timestamp', 'Unix seconds of this attempt; refuse one far from your clock (Standard Webhooks allow 5 minutes).'],
  ['webhook-signature', '`v1,` and the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the base64-decoded part of the secret after `whsec_`.'],
] as const;

/** The OpenAPI `webhooks` object: what a subscribed URL receives, one entry per event type. */
export function webhooksDocument(): Record<string, unknown> {
  return Object.fromEntries(
    EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          tags: ['webhooks'],
          summary: DATA[type].summary,
          description:
            type === 'webhook.ping'
              ? 'POSTed to the webhook pinged alone, signed per Standard Webhooks.'
              : 'POSTed to every webhook enabled and subscribed to this type (or to `*`) when it happened, at least once (the same `webhook-id` may come again); signed per Standard Webhooks. ' +
                'A 2xx within 10 s acknowledges it; anything else is retried (docs/api.md, Webhooks).',
          parameters: HEADERS.map(([name, description]) => ({ name, in: 'header', required: true, description, schema: { type: 'string' } })),
          requestBody: { required: true, content: { 'application/json': { schema: webhookPayloadSchema(type) } } },
          responses: { '2XX': { description: 'Acknowledged: no further automatic attempt (a manual redelivery sends it again).' } },
        },
      },
    ]),
  );
}
