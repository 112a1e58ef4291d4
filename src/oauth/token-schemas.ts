import { Type } from '@sinclair/typebox';

export const TokenRequestBody = Type.Object(
  {
    grant_type: Type.Optional(
      Type.String({ description: '`client_credentials` (a service client), `authorization_code` or `refresh_token` (an app).', examples: ['authorization_code'] }),
    ),
    scope: Type.Optional(
      Type.String({
        description:
          "Space-separated scopes. Client credentials: left out, all the client's scopes. Refresh: some of the scopes the session was " +
          'granted, to narrow the new access token (left out: all of them). Not used by the code grant (the code carries its scopes).',
        examples: ['reservations:write variants:read'],
      }),
    ),
    code: Type.Optional(Type.String({ description: 'authorization_code: the code of the authorization response (single use, 60 seconds).' })),
    redirect_uri: Type.Optional(Type.String({ description: 'authorization_code: the redirect_uri of the authorization request, character for character.' })),
    code_verifier: Type.Optional(Type.String({ description: 'authorization_code: the PKCE verifier (RFC 7636: 43 to 128 characters of A-Z a-z 0-9 - . _ ~) whose S256 is the code_challenge.' })),
    refresh_token: Type.Optional(Type.String({ description: 'refresh_token: the refresh token the app holds for the session.' })),
    client_id: Type.Optional(Type.String({ description: "The client's id: with client_secret (client_secret_post), or alone for a public app (none); or use HTTP Basic." })),
    client_secret: Type.Optional(Type.String({ description: 'One of its secrets (client_secret_post); or use HTTP Basic. A public app sends none.' })),
  },
  {
    examples: [
      { grant_type: 'client_credentials', scope: 'reservations:write' },
      { grant_type: 'authorization_code', code: 'SplxlOBeZQQYbYS6WxSbIA8Xq3mI2bC1nQYd7Vy3sW0', redirect_uri: 'https://shop.example.com/callback', code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk', client_id: '3f0c4e1a-8d5b-4c2e-9a71-2b6d0e5f4a13' },
      { grant_type: 'refresh_token', refresh_token: 'tGzv3JOkF0XG5Qx2TlKWIA', scope: 'openid account' },
    ],
  },
);

export const TokenSchema = Type.Object({
  access_token: Type.String({
    description:
      'A JWT (typ at+jwt); verify it with the JWKS. A service client\'s carries `sub` and `client_id` (the client), `scope` and ' +
      "`client_generation` (the client's token generation, which disabling the client moves on: its earlier tokens stay refused " +
      "once it is enabled again). An app's acts for the user: `sub` (the user), `sid` (the app's session), `client_id` (the app), " +
      '`scope`, `amr` and `auth_time` (the sign-in\'s).',
  }),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer({ description: 'ACCESS_TOKEN_TTL seconds.' }),
  scope: Type.String({ description: 'The scopes the access token carries, space-separated.' }),
  refresh_token: Type.Optional(
    Type.String({ description: 'An app granted `offline_access` only: rotates at each refresh (the grant answers the next one). A service client gets none: it asks again.' }),
  ),
  id_token: Type.Optional(
    Type.String({
      description:
        'An app granted `openid` only: a JWT (typ JWT) signed as its id_token_signed_response_alg says (RS256 or EdDSA), verifiable with ' +
        'the JWKS: iss, sub, aud (the app), exp (ACCESS_TOKEN_TTL), iat, auth_time, nonce (the code grant, when the request sent one), ' +
        'sid, amr, at_hash (SHA-256 for RS256, SHA-512 for EdDSA), and the claims of the granted scopes (email, email_verified; name, ' +
        'updated_at; phone_number).',
    }),
  ),
});
