import { Type, type Static } from '@sinclair/typebox';
import { IdParams, StringEnum, Timestamp, TrimmedText } from '../http/common-schemas.js';
import { SCOPE_NAMES, SCOPES } from '../sessions/access-rule.js';

const Name = TrimmedText(100, { description: 'What the client is', examples: ['Checkout service'] });
const Description = Type.Union([TrimmedText(500, { description: 'What it is for', examples: ['Reserves stock at checkout'] }), Type.Null()]);
const Scope = StringEnum([...SCOPE_NAMES], {
  description: `A scope: ${Object.entries(SCOPES).map(([scope, what]) => `\`${scope}\` (${what})`).join('; ')}.`,
});
const Scopes = Type.Array(Scope, { minItems: 1, maxItems: SCOPE_NAMES.length, uniqueItems: true, description: 'The scopes the client holds, each at most once.', examples: [['reservations:write', 'variants:read']] });
const RateLimit = Type.Union([Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Requests a minute.' }), Type.Null()], {
  description: "The client's own rate limit, requests a minute; null: API_RATE_LIMIT.",
});
const Status = StringEnum(['active', 'disabled'], { description: 'A disabled client is refused, its tokens too; enabled again, its tokens issued before stay refused.' });

export const ClientSecretSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    prefix: Type.String({ description: 'The first 12 characters of the secret, to recognise it (`shop_sk_…`).' }),
    created_at: Timestamp,
    expires_at: Type.Union([Timestamp, Type.Null()], { description: 'When it stops working; null: never (until deleted or rolled).' }),
    last_used_at: Type.Union([Timestamp, Type.Null()], { description: 'Noted at most once a minute.' }),
  },
  { $id: 'ClientSecret', title: 'API client secret (never its value)' },
);

export const ClientSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    scopes: Type.Array(Type.String()),
    status: Status,
    rate_limit: Type.Union([Type.Integer(), Type.Null()]),
    version: Type.Integer(),
    created_by: Type.String({ format: 'uuid', description: 'The admin who created it.' }),
    created_at: Timestamp,
    updated_at: Timestamp,
    last_used_at: Type.Union([Timestamp, Type.Null()], { description: 'Noted at most once a minute.' }),
    secrets: Type.Array(Type.Ref(ClientSecretSchema), { description: 'Its secrets that are not deleted, newest first, by prefix.' }),
  },
  {
    $id: 'ApiClient',
    title: 'API client',
    examples: [
      {
        id: '0c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f',
        name: 'Checkout service',
        description: 'Reserves stock at checkout',
        scopes: ['reservations:write', 'variants:read'],
        status: 'active',
        rate_limit: null,
        version: 1,
        created_by: '3f0c4e1a-8d5b-4c2e-9a71-2b6d0e5f4a13',
        created_at: '2026-11-23T08:00:00.000Z',
        updated_at: '2026-11-23T08:00:00.000Z',
        last_used_at: null,
        secrets: [{ id: '5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b', prefix: 'shop_sk_Xk2v', created_at: '2026-11-23T08:00:00.000Z', expires_at: null, last_used_at: null }],
      },
    ],
  },
);

export const CreateClientBody = Type.Object(
  { name: Name, description: Type.Optional(Description), scopes: Scopes, rate_limit: Type.Optional(RateLimit) },
  { additionalProperties: false, examples: [{ name: 'Checkout service', scopes: ['reservations:write', 'variants:read'] }] },
);
export type CreateClientInput = Static<typeof CreateClientBody>;

export const PatchClientBody = Type.Object(
  { name: Type.Optional(Name), description: Type.Optional(Description), scopes: Type.Optional(Scopes), status: Type.Optional(Status), rate_limit: Type.Optional(RateLimit) },
  {
    additionalProperties: false,
    description: 'JSON merge patch (RFC 7396): fields left out stay; `description: null` and `rate_limit: null` clear them. `{}` changes nothing.',
    examples: [{ status: 'disabled' }, { scopes: ['variants:read'] }],
  },
);
export type ClientPatch = Static<typeof PatchClientBody>;

export const NewSecretBody = Type.Object(
  {
    expire_others_in: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 604_800, default: 86_400, description: 'Seconds the other secrets keep working (0: they stop now); one that expires sooner keeps its time.' }),
    ),
  },
  { additionalProperties: false, description: 'Optional: send no body for the default (a day).', examples: [{ expire_others_in: 3600 }] },
);

export const CreatedClientSchema = Type.Composite([
  Type.Omit(ClientSchema, []),
  Type.Object({ secret: Type.String({ description: 'Shown once: `shop_sk_` and 43 base64url characters. Only its hash is kept.' }) }),
]);

export const CreatedSecretSchema = Type.Composite([
  Type.Omit(ClientSecretSchema, []),
  Type.Object({ secret: Type.String({ description: 'Shown once. Only its hash is kept.' }) }),
]);

export const SecretParams = Type.Object({ id: IdParams.properties.id, secret_id: IdParams.properties.id });
