import { Type, type Static } from '@sinclair/typebox';
import { Timestamp, TrimmedText } from '../http/common-schemas.js';

export const DEFAULT_PROVIDER_SCOPES = ['openid', 'email', 'profile'];

const ProviderName = TrimmedText(100, { description: 'What admins call the provider', examples: ['Google'] });
const ButtonLabel = TrimmedText(100, { description: 'The text of its button on the hosted sign-in page', examples: ['Sign in with Google'] });
const Issuer = Type.String({
  minLength: 1,
  maxLength: 2000,
  description:
    "The provider's issuer identifier: an https URL (http only for a loopback host); else 400 `invalid_provider`. Its discovery document " +
    '(`{issuer}/.well-known/openid-configuration`) is read whenever `issuer` is saved, and must name this issuer and offer the code flow.',
  examples: ['https://accounts.google.com'],
});
const ClientId = Type.String({ minLength: 1, maxLength: 500, pattern: '^\\S+$', description: 'The client id the provider gave the service.', examples: ['1234567890-shop.apps.googleusercontent.com'] });
const ClientSecret = Type.String({
  minLength: 1,
  maxLength: 1000,
  writeOnly: true,
  description: 'The client secret the provider gave the service. Write-only: no reply, event or log shows it; it is kept encrypted.',
});
const Scopes = Type.Array(Type.String({ pattern: '^[\\x21\\x23-\\x5B\\x5D-\\x7E]{1,100}$', 'x-pattern-message': 'must be a scope token (RFC 6749, 3.3)' }), {
  maxItems: 20,
  description: 'What the service asks the provider for; `openid` is always included (added first when left out), repeats are dropped. `["openid", "email", "profile"]` when left out.',
  examples: [['openid', 'email', 'profile']],
});
const AppleId = (what: string) =>
  Type.String({ pattern: '^[A-Z0-9]{10}$', 'x-pattern-message': 'must be 10 capital letters or digits', description: `Apple only: ${what} (10 characters).`, examples: ['ABCDE12345'] });
const ApplePrivateKey = Type.String({
  minLength: 1,
  maxLength: 10000,
  writeOnly: true,
  description:
    'Apple only: the private key of the Sign in with Apple key (the PEM of the .p8 file, a P-256 key); the service signs the ES256 client secret JWT Apple ' +
    'requires with it. Write-only and kept encrypted; a text that is not such a key is 400 `validation_failed`.',
});
const CREDENTIAL_RULE =
  'A provider authenticates the service with exactly one credential: `client_secret`, or, for Apple, all three of `apple_team_id`, `apple_key_id` ' +
  'and `apple_private_key`. Neither, both, or part of Apple\'s is 400 `validation_failed`.';

export const IdentityProviderSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    issuer: Type.String(),
    client_id: Type.String(),
    scopes: Type.Array(Type.String(), { description: '`openid` included.' }),
    button_label: Type.String(),
    link_by_verified_email: Type.Boolean({ description: "Whether a new identity is linked to the account with its email when the provider says `email_verified: true` (role `user` only)." }),
    enabled: Type.Boolean({ description: "Whether users may sign in with it (its button on the hosted sign-in page); a disabled provider's identities stay linked." }),
    apple_team_id: Type.Union([Type.String(), Type.Null()], { description: "Apple's team id, or null for a provider with a client secret." }),
    apple_key_id: Type.Union([Type.String(), Type.Null()], { description: "The id of Apple's key, or null for a provider with a client secret." }),
    version: Type.Integer({ description: 'Grows by one on each write; the `ETag` is `"<version>"`.' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  {
    $id: 'IdentityProvider',
    title: 'IdentityProvider',
    description: 'An OpenID provider users may sign in with. Its credential (`client_secret` or `apple_private_key`) is write-only and never shown.',
    examples: [
      {
        id: '0b6f2c1e-5d4a-4e3b-9c8d-7a6b5c4d3e2f',
        name: 'Google',
        issuer: 'https://accounts.google.com',
        client_id: '1234567890-shop.apps.googleusercontent.com',
        scopes: ['openid', 'email', 'profile'],
        button_label: 'Sign in with Google',
        link_by_verified_email: false,
        enabled: true,
        apple_team_id: null,
        apple_key_id: null,
        version: 1,
        created_at: '2026-11-29T08:00:00.000Z',
        updated_at: '2026-11-29T08:00:00.000Z',
      },
    ],
  },
);

export const IdentityProviderListSchema = Type.Object(
  { items: Type.Array(Type.Ref(IdentityProviderSchema), { description: 'Every provider, by name (without regard to case); not paged.' }) },
  { additionalProperties: false },
);

export const CreateIdentityProviderBody = Type.Object(
  {
    name: ProviderName,
    issuer: Issuer,
    client_id: ClientId,
    client_secret: Type.Optional(ClientSecret),
    scopes: Type.Optional(Scopes),
    button_label: ButtonLabel,
    link_by_verified_email: Type.Optional(Type.Boolean({ description: 'False when left out: turn it on only for a provider whose `email_verified` you trust.' })),
    enabled: Type.Optional(Type.Boolean({ description: 'True when left out.' })),
    apple_team_id: Type.Optional(AppleId("the team id of the Apple developer account (the JWT's `iss`)")),
    apple_key_id: Type.Optional(AppleId("the id of the Sign in with Apple key (the JWT's `kid`)")),
    apple_private_key: Type.Optional(ApplePrivateKey),
  },
  {
    additionalProperties: false,
    description: CREDENTIAL_RULE,
    examples: [{ name: 'Google', issuer: 'https://accounts.google.com', client_id: '1234567890-shop.apps.googleusercontent.com', client_secret: 'GOCSPX-…', button_label: 'Sign in with Google' }],
  },
);
export type CreateIdentityProviderInput = Static<typeof CreateIdentityProviderBody>;

const orNull = <Schema extends Parameters<typeof Type.Union>[0][number]>(schema: Schema) => Type.Union([schema, Type.Null()]);

export const PatchIdentityProviderBody = Type.Object(
  {
    name: Type.Optional(ProviderName),
    issuer: Type.Optional(Issuer),
    client_id: Type.Optional(ClientId),
    client_secret: Type.Optional(orNull(ClientSecret)),
    scopes: Type.Optional(Scopes),
    button_label: Type.Optional(ButtonLabel),
    link_by_verified_email: Type.Optional(Type.Boolean()),
    enabled: Type.Optional(Type.Boolean()),
    apple_team_id: Type.Optional(orNull(AppleId('the team id'))),
    apple_key_id: Type.Optional(orNull(AppleId('the key id'))),
    apple_private_key: Type.Optional(orNull(ApplePrivateKey)),
  },
  {
    additionalProperties: false,
    description:
      'JSON merge patch (RFC 7396): fields left out stay; `null` removes a credential field (only they may be null). ' +
      `${CREDENTIAL_RULE.replace('A provider', 'After the patch, the provider')} A credential sent is a write even when it is the same. ` +
      'An `issuer` sent is read again (its discovery document), even when it is the one kept. `{}` (or a patch to the values it has) changes nothing and keeps `version`.',
    examples: [{ enabled: false }, { client_secret: 'a-new-secret' }, { scopes: ['openid', 'email'] }],
  },
);
export type IdentityProviderPatch = Static<typeof PatchIdentityProviderBody>;
