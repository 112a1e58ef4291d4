import { Type } from '@sinclair/typebox';

const url = (description: string) => Type.Optional(Type.String({ format: 'uri', description }));
const list = (description: string, example: string[]) => Type.Optional(Type.Array(Type.String(), { description, examples: [example] }));
const on = 'Present while the authorization server of section 18 is on.';

/**
 * RFC 8414 and OpenID Connect Discovery 1.0 metadata. The first seven fields are section 11's
 * (v3); the others are section 18's, present only while its authorization server is on.
 */
export const AuthorizationServerMetadataSchema = Type.Object({
  issuer: Type.String({ description: 'JWT_ISSUER: the `iss` of every access token, ID token and authorization response.', examples: ['https://id.shop.example'] }),
  token_endpoint: Type.String({ format: 'uri', examples: ['https://id.shop.example/api/oauth/token'] }),
  jwks_uri: Type.String({ format: 'uri', examples: ['https://id.shop.example/.well-known/jwks.json'] }),
  grant_types_supported: Type.Array(Type.String(), { examples: [['authorization_code', 'refresh_token', 'client_credentials']] }),
  token_endpoint_auth_methods_supported: Type.Array(Type.String(), { description: '`none` is a public app sending its client_id alone.', examples: [['client_secret_basic', 'client_secret_post', 'none']] }),
  scopes_supported: Type.Array(Type.String()),
  response_types_supported: Type.Array(Type.String(), { description: '`["code"]`, or `[]` while the authorization server is off.' }),
  authorization_endpoint: url(`The hosted sign-in (/oauth/authorize). ${on}`),
  userinfo_endpoint: url(`OpenID Connect UserInfo (/oauth/userinfo). ${on}`),
  end_session_endpoint: url(`RP-initiated logout (/oauth/logout). ${on}`),
  revocation_endpoint: url(`RFC 7009 (/oauth/revoke). ${on}`),
  introspection_endpoint: url(`RFC 7662 (/oauth/introspect). ${on}`),
  response_modes_supported: list(on, ['query']),
  revocation_endpoint_auth_methods_supported: list(on, ['client_secret_basic', 'client_secret_post', 'none']),
  introspection_endpoint_auth_methods_supported: list(`A public app may not introspect. ${on}`, ['client_secret_basic', 'client_secret_post']),
  code_challenge_methods_supported: list(`PKCE is required of every app. ${on}`, ['S256']),
  id_token_signing_alg_values_supported: list(`As the app's id_token_signed_response_alg says. ${on}`, ['RS256', 'EdDSA']),
  subject_types_supported: list(on, ['public']),
  claims_supported: list(on, ['sub', 'email', 'name']),
  claim_types_supported: list(on, ['normal']),
  prompt_values_supported: list(on, ['none', 'login', 'consent', 'create']),
  ui_locales_supported: list(`The hosted pages' languages. ${on}`, ['en', 'de']),
  authorization_response_iss_parameter_supported: Type.Optional(Type.Boolean({ description: `RFC 9207: authorization responses carry \`iss\`. ${on}` })),
  claims_parameter_supported: Type.Optional(Type.Boolean({ description: on })),
  request_parameter_supported: Type.Optional(Type.Boolean({ description: on })),
  request_uri_parameter_supported: Type.Optional(Type.Boolean({ description: on })),
});
