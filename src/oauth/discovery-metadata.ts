import type { Config } from '../config.js';
import { SCOPE_NAMES, SIGN_IN_SCOPE_NAMES } from '../sessions/access-rule.js';

/** The claims an ID token or userinfo may carry (API.md section 18, "Tokens"). */
const CLAIMS = ['iss', 'sub', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'sid', 'amr', 'at_hash', 'email', 'email_verified', 'name', 'updated_at', 'phone_number'];
const SECRET_METHODS = ['client_secret_basic', 'client_secret_post'];

/** Section 11's RFC 8414 document, as v3 published it: the client credentials grant alone. */
function clientCredentialsMetadata(config: Config) {
  return {
    issuer: config.jwtIssuer,
    token_endpoint: `${config.publicUrl}/api/oauth/token`,
    jwks_uri: `${config.publicUrl}/.well-known/jwks.json`,
    grant_types_supported: ['client_credentials'],
    token_endpoint_auth_methods_supported: SECRET_METHODS,
    scopes_supported: [...SCOPE_NAMES] as string[],
    response_types_supported: [] as string[],
  };
}

/**
 * The authorization server's metadata: RFC 8414 and OpenID Connect Discovery 1.0 in one document,
 * served at both well-known addresses. With the authorization server off (JWT_ISSUER neither https
 * nor http on a loopback host) only the v3 document of section 11 remains.
 */
export function authorizationServerMetadata(config: Config) {
  const base = clientCredentialsMetadata(config);
  if (!config.authorizationServer) return base;
  const endpoint = (path: string) => `${config.publicUrl}${path}`;
  return {
    ...base,
    authorization_endpoint: endpoint('/oauth/authorize'),
    userinfo_endpoint: endpoint('/oauth/userinfo'),
    end_session_endpoint: endpoint('/oauth/logout'),
    revocation_endpoint: endpoint('/oauth/revoke'),
    introspection_endpoint: endpoint('/oauth/introspect'),
    grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    // `none`: a public app sends its client_id alone.
    token_endpoint_auth_methods_supported: [...SECRET_METHODS, 'none'],
    revocation_endpoint_auth_methods_supported: [...SECRET_METHODS, 'none'],
    // A public app may not introspect (API.md section 18).
    introspection_endpoint_auth_methods_supported: SECRET_METHODS,
    code_challenge_methods_supported: ['S256'],
    id_token_signing_alg_values_supported: ['RS256', 'EdDSA'],
    subject_types_supported: ['public'],
    scopes_supported: [...SIGN_IN_SCOPE_NAMES, ...SCOPE_NAMES] as string[],
    claims_supported: CLAIMS,
    claim_types_supported: ['normal'],
    prompt_values_supported: ['none', 'login', 'consent', 'create'],
    ui_locales_supported: ['en', 'de'],
    authorization_response_iss_parameter_supported: true,
    // Discovery's defaults would promise request objects by reference (request_uri_parameter_supported: true).
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
  };
}
