import { Type, type Static } from '@sinclair/typebox';
import { IdParams, StringEnum, Timestamp, TrimmedText } from '../http/common-schemas.js';
import { SCOPE_NAMES, SCOPES, SIGN_IN_SCOPE_NAMES, SIGN_IN_SCOPES } from '../sessions/access-rule.js';

const EVERY_SCOPE = [...SCOPE_NAMES, ...SIGN_IN_SCOPE_NAMES];
/** `openid`, `profile`, … and `account`: the sign-in scopes as a description lists them. */
export const SIGN_IN_SCOPE_LIST = `${SIGN_IN_SCOPE_NAMES.slice(0, -1).map((scope) => `\`${scope}\``).join(', ')} and \`${SIGN_IN_SCOPE_NAMES.at(-1)}\``;

/** How the fields only apps have read on a service client, and that a service client's body may not hold them. */
const APP_ONLY = 'An app\'s (`confidential`, `public`); a service client\'s body may not hold it (400), and its reply shows';

const Name = TrimmedText(100, { description: 'What the client is', examples: ['Checkout service'] });
const Description = Type.Union([TrimmedText(500, { description: 'What it is for', examples: ['Reserves stock at checkout'] }), Type.Null()]);
const Scope = StringEnum(EVERY_SCOPE, {
  description:
    `A scope: ${Object.entries(SCOPES).map(([scope, what]) => `\`${scope}\` (${what})`).join('; ')}. ` +
    `Apps only, what they may ask a user for: ${Object.entries(SIGN_IN_SCOPES).map(([scope, what]) => `\`${scope}\` (${what})`).join('; ')}.`,
});
const Scopes = Type.Array(Scope, {
  minItems: 1,
  maxItems: EVERY_SCOPE.length,
  uniqueItems: true,
  description: `The scopes the client holds (an app: those it may ask a user for), each at most once; ${SIGN_IN_SCOPE_LIST} are an app's only.`,
  examples: [['reservations:write', 'variants:read']],
});
const RateLimit = Type.Union([Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Requests a minute.' }), Type.Null()], {
  description: "The client's own rate limit, requests a minute; null: API_RATE_LIMIT.",
});
const Status = StringEnum(['active', 'disabled'], { description: 'A disabled client is refused, its tokens too; enabled again, its tokens issued before stay refused.' });
const ClientTypeSchema = StringEnum(['service', 'confidential', 'public'], {
  description:
    'Set at creation only. `service`: another service, calling the API with its own scopes (a secret, or the client credentials grant). ' +
    '`confidential`: an app with a back end that signs users in, authenticating with a secret; `public`: a single-page or mobile app that ' +
    'signs users in and has no secret. Apps never use the client credentials grant, nor their secret as a bearer token.',
});
const RedirectUri = Type.String({
  minLength: 1,
  maxLength: 2000,
  description:
    'An absolute URL without a fragment, user name or password: `https`, `http` only on a loopback host (`127.0.0.1`, `[::1]`, `localhost`, any ' +
    'port), or a private-use scheme of a native app, a reversed domain name such as `com.example.shop:/callback`. Written in its normal ' +
    'form, as a URL parser writes it back (lower-case scheme and host, no default port, `https://shop.example.com/` rather than ' +
    '`https://shop.example.com`, spaces percent-encoded), since it is matched character for character; any other spelling is refused.',
});
const RedirectUris = Type.Array(RedirectUri, { minItems: 1, maxItems: 10, uniqueItems: true, description: `Where the app may have users sent back after signing in, 1 to 10. ${APP_ONLY} \`[]\`.`, examples: [['https://shop.example.com/callback']] });
const PostLogoutRedirectUris = Type.Array(RedirectUri, { maxItems: 10, uniqueItems: true, description: `Where the app may have users sent after signing out, 0 to 10 (default none), the same rules. ${APP_ONLY} \`[]\`.` });
const FirstParty = Type.Boolean({ description: `True: the shop's own app, which never asks the user's consent; false (default): a third-party app, which does. ${APP_ONLY} false.` });
const LogoUri = Type.Union([Type.String({ minLength: 1, maxLength: 2000, description: 'An https URL in its normal form (as for a redirect URI).' }), Type.Null()], { description: `The app's logo on the consent page: an https URL, or null (default). ${APP_ONLY} null.` });
const IdTokenAlgorithmSchema = StringEnum(['RS256', 'EdDSA'], { description: `How the app's ID tokens are signed: \`RS256\` (default) or \`EdDSA\`. ${APP_ONLY} null (it gets no ID token).` });

/** The fields only apps have, in the order the API shows them. */
export const APP_FIELDS = ['redirect_uris', 'post_logout_redirect_uris', 'first_party', 'logo_uri', 'id_token_signed_response_alg'] as const;

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
    type: ClientTypeSchema,
    scopes: Type.Array(Type.String()),
    status: Status,
    rate_limit: Type.Union([Type.Integer(), Type.Null()]),
    version: Type.Integer(),
    created_by: Type.String({ format: 'uuid', description: 'The admin who created it.' }),
    created_at: Timestamp,
    updated_at: Timestamp,
    last_used_at: Type.Union([Timestamp, Type.Null()], { description: 'Noted at most once a minute.' }),
    secrets: Type.Array(Type.Ref(ClientSecretSchema), { description: 'Its secrets that are not deleted, newest first, by prefix; a public client has none (`[]`).' }),
    redirect_uris: Type.Array(Type.String(), { description: `Where the app may have users sent back after signing in. ${APP_ONLY} \`[]\`.` }),
    post_logout_redirect_uris: Type.Array(Type.String(), { description: `Where the app may have users sent after signing out. ${APP_ONLY} \`[]\`.` }),
    first_party: Type.Boolean({ description: `A first-party app never asks the user's consent. ${APP_ONLY} false.` }),
    logo_uri: Type.Union([Type.String(), Type.Null()], { description: `The app's logo, https. ${APP_ONLY} null.` }),
    id_token_signed_response_alg: Type.Union([IdTokenAlgorithmSchema, Type.Null()], { description: `\`RS256\` or \`EdDSA\`. ${APP_ONLY} null (it gets no ID token).` }),
  },
  {
    $id: 'ApiClient',
    title: 'API client',
    examples: [
      {
        id: '0c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f',
        name: 'Checkout service',
        description: 'Reserves stock at checkout',
        type: 'service',
        scopes: ['reservations:write', 'variants:read'],
        status: 'active',
        rate_limit: null,
        version: 1,
        created_by: '3f0c4e1a-8d5b-4c2e-9a71-2b6d0e5f4a13',
        created_at: '2026-11-23T08:00:00.000Z',
        updated_at: '2026-11-23T08:00:00.000Z',
        last_used_at: null,
        secrets: [{ id: '5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b', prefix: 'shop_sk_Xk2v', created_at: '2026-11-23T08:00:00.000Z', expires_at: null, last_used_at: null }],
        redirect_uris: [],
        post_logout_redirect_uris: [],
        first_party: false,
        logo_uri: null,
        id_token_signed_response_alg: null,
      },
      {
        id: '7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d',
        name: 'Shop app',
        description: 'The iOS and Android app',
        type: 'public',
        scopes: ['openid', 'email', 'offline_access', 'account'],
        status: 'active',
        rate_limit: null,
        version: 1,
        created_by: '3f0c4e1a-8d5b-4c2e-9a71-2b6d0e5f4a13',
        created_at: '2026-11-23T08:00:00.000Z',
        updated_at: '2026-11-23T08:00:00.000Z',
        last_used_at: null,
        secrets: [],
        redirect_uris: ['com.example.shop:/callback'],
        post_logout_redirect_uris: [],
        first_party: true,
        logo_uri: 'https://shop.example.com/logo.png',
        id_token_signed_response_alg: 'RS256',
      },
    ],
  },
);

export const CreateClientBody = Type.Object(
  {
    name: Name,
    description: Type.Optional(Description),
    type: Type.Optional(ClientTypeSchema),
    scopes: Scopes,
    rate_limit: Type.Optional(RateLimit),
    redirect_uris: Type.Optional(RedirectUris),
    post_logout_redirect_uris: Type.Optional(PostLogoutRedirectUris),
    first_party: Type.Optional(FirstParty),
    logo_uri: Type.Optional(LogoUri),
    id_token_signed_response_alg: Type.Optional(IdTokenAlgorithmSchema),
  },
  {
    additionalProperties: false,
    description:
      '`type` defaults to `service`. An app (`confidential`, `public`) must have `redirect_uris`; a service client may hold none of ' +
      '`redirect_uris`, `post_logout_redirect_uris`, `first_party`, `logo_uri`, `id_token_signed_response_alg`, nor an app-only scope.',
    examples: [
      { name: 'Checkout service', scopes: ['reservations:write', 'variants:read'] },
      { name: 'Shop app', type: 'public', scopes: ['openid', 'email', 'offline_access', 'account'], redirect_uris: ['com.example.shop:/callback'], first_party: true },
    ],
  },
);
export type CreateClientInput = Static<typeof CreateClientBody>;

export const PatchClientBody = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    scopes: Type.Optional(Scopes),
    status: Type.Optional(Status),
    rate_limit: Type.Optional(RateLimit),
    redirect_uris: Type.Optional(RedirectUris),
    post_logout_redirect_uris: Type.Optional(Type.Union([PostLogoutRedirectUris, Type.Null()])),
    first_party: Type.Optional(Type.Union([FirstParty, Type.Null()])),
    logo_uri: Type.Optional(LogoUri),
    id_token_signed_response_alg: Type.Optional(Type.Union([IdTokenAlgorithmSchema, Type.Null()])),
  },
  {
    additionalProperties: false,
    description:
      'JSON merge patch (RFC 7396): fields left out stay; `null` sets an optional field to its default: `description`, `rate_limit` and ' +
      '`logo_uri` null, `post_logout_redirect_uris` `[]`, `first_party` false, `id_token_signed_response_alg` `RS256` (`redirect_uris`, ' +
      'required of an app, cannot be null). `{}` changes nothing. `type` is set at creation only (400 here, like any field the body may ' +
      'not hold); the app-only fields, for an app only (a service client may not send them, not even null).',
    examples: [{ status: 'disabled' }, { scopes: ['variants:read'] }, { redirect_uris: ['https://shop.example.com/callback', 'http://127.0.0.1/callback'] }],
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
  Type.Object({ secret: Type.Optional(Type.String({ description: 'Shown once: `shop_sk_` and 43 base64url characters. Only its hash is kept. A public client has none, and no `secret` here.' })) }),
]);

export const CreatedSecretSchema = Type.Composite([
  Type.Omit(ClientSecretSchema, []),
  Type.Object({ secret: Type.String({ description: 'Shown once. Only its hash is kept.' }) }),
]);

export const SecretParams = Type.Object({ id: IdParams.properties.id, secret_id: IdParams.properties.id });
