import { Type } from '@sinclair/typebox';

const token = Type.String({ description: 'The access token or refresh token.' });
const tokenTypeHint = Type.Optional(Type.String({ description: '`access_token` or `refresh_token`: where to look first (RFC 7009 §2.1); both kinds are looked at, and any other value is ignored.', examples: ['refresh_token'] }));
const clientId = Type.Optional(Type.String({ description: "The client's id (client_secret_post, or a public app's `none`); or use HTTP Basic." }));
const clientSecret = Type.Optional(Type.String({ description: 'One of its secrets (client_secret_post); or use HTTP Basic. A public app sends none.' }));

export const RevocationRequestBody = Type.Object(
  { token, token_type_hint: tokenTypeHint, client_id: clientId, client_secret: clientSecret },
  { examples: [{ token: 'k3r8…the refresh token…', token_type_hint: 'refresh_token' }] },
);

export const IntrospectionRequestBody = Type.Object(
  { token, token_type_hint: tokenTypeHint, client_id: clientId, client_secret: clientSecret },
  { examples: [{ token: 'eyJ…the access token…', token_type_hint: 'access_token' }] },
);

/** The form parameters these endpoints read; any other is ignored (RFC 6749 §3.2). */
export const TOKEN_FORM_PARAMETERS = ['token', 'token_type_hint', 'client_id', 'client_secret'] as const;

export const IntrospectionSchema = Type.Object(
  {
    active: Type.Boolean({ description: 'Whether a request with the token would be admitted now. When false, nothing else is said.' }),
    token_type: Type.Optional(Type.Union([Type.Literal('access_token'), Type.Literal('refresh_token')], { description: 'Which kind of token it is.' })),
    sub: Type.Optional(Type.String({ format: 'uuid', description: 'The user the token acts for.' })),
    client_id: Type.Optional(Type.String({ format: 'uuid', description: 'The app that holds it.' })),
    scope: Type.Optional(Type.String({ description: 'The scopes it may use now, space-separated: the granted ones the app still holds.' })),
    exp: Type.Optional(Type.Integer({ description: 'When it expires, seconds since the epoch.' })),
    iat: Type.Optional(Type.Integer({ description: 'When it was issued, seconds since the epoch.' })),
    sid: Type.Optional(Type.String({ format: 'uuid', description: "The app's session the token belongs to (as in the ID token)." })),
    iss: Type.Optional(Type.String({ description: 'JWT_ISSUER.' })),
  },
  { examples: [{ active: true, token_type: 'access_token', sub: '0b6f7d1e-5c1a-4a39-9d8e-3f0c2a5b6e71', client_id: '5d1c2b3a-0f9e-4d8c-b7a6-1e2f3a4b5c6d', scope: 'openid email account', exp: 1795782000, iat: 1795781100, sid: '9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d', iss: 'https://shop.example.com' }, { active: false }] },
);
