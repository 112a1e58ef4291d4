import type { Kysely } from 'kysely';
import type { ClientType, Database, IdTokenAlgorithm } from '../db/tables.js';
import { CANONICAL_UUID } from '../http/common-schemas.js';
import { hashClientSecret, SECRET_PATTERN, secretMatches } from '../sessions/client-secrets.js';
import type { TokenIssuer } from '../sessions/token-issuer.js';
import { findClientById, findUsableSecret, noteClientUsed } from './client-repository.js';

/** An error of the token endpoint in RFC 6749 section 5.2's words. */
export class OAuthError extends Error {
  constructor(
    readonly error: 'invalid_request' | 'invalid_client' | 'invalid_grant' | 'unauthorized_client' | 'unsupported_grant_type' | 'invalid_scope' | 'rate_limited',
    readonly description: string,
    readonly status: number,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
  }
}

/** How the client said who it is: HTTP Basic, or the form's fields. */
export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
  viaBasic: boolean;
}

export interface TokenRequest {
  grantType: string | undefined;
  scope: string | undefined;
  credentials: ClientCredentials | undefined;
}

const invalidClient = (viaBasic: boolean) =>
  new OAuthError('invalid_client', 'The client is unknown, disabled or deleted, or its secret is wrong, expired or deleted.', 401, viaBasic ? { 'www-authenticate': 'Basic realm="shop-accounts", charset="UTF-8"' } : {});

const noCredentials = () => new OAuthError('invalid_client', 'Authenticate the client with HTTP Basic, or with client_id and client_secret.', 401);

/** The client a live secret of an active client names, or 401 `invalid_client` (unknown, wrong, expired, deleted, disabled alike). */
async function clientOfSecret(db: Kysely<Database>, credentials: ClientCredentials) {
  const secret = SECRET_PATTERN.test(credentials.clientSecret) ? await findUsableSecret(db, hashClientSecret(credentials.clientSecret)) : undefined;
  if (!secret || secret.client_id !== credentials.clientId.toLowerCase() || !secretMatches(credentials.clientSecret, secret.secret_hash) || secret.status !== 'active') {
    throw invalidClient(credentials.viaBasic);
  }
  return secret;
}

/** An app authenticated at the token endpoint, as the code and refresh grants need it. */
export interface AuthenticatedApp {
  id: string;
  type: Exclude<ClientType, 'service'>;
  /** The scopes it may ask for now. */
  scopes: string[];
  idTokenAlgorithm: IdTokenAlgorithm;
}

/**
 * The client of a code or refresh grant (API.md section 18; OAuth 2.1 §2.4): a confidential app by
 * one of its secrets (HTTP Basic or the form, as the client credentials grant), a public app by its
 * `client_id` alone in the form (`none`; an empty `client_secret` counts as none). A service client
 * that authenticated is 400 `unauthorized_client`; anything else that fails is 401 `invalid_client`.
 */
export async function authenticateApp(db: Kysely<Database>, credentials: ClientCredentials | undefined): Promise<AuthenticatedApp> {
  if (!credentials) throw noCredentials();
  let client: { id: string; type: ClientType; scopes: string[]; alg: IdTokenAlgorithm | null; secretId: string | null };
  if (credentials.viaBasic || credentials.clientSecret !== '') {
    const secret = await clientOfSecret(db, credentials);
    client = { id: secret.client_id, type: secret.type, scopes: secret.scopes, alg: secret.id_token_signed_response_alg, secretId: secret.secret_id };
  } else {
    const id = credentials.clientId.toLowerCase();
    const found = CANONICAL_UUID.test(id) ? await findClientById(db, id) : undefined;
    // Only a public app may come without a secret; a confidential one that forgot it is refused like a stranger.
    if (!found || found.type !== 'public' || found.status !== 'active') {
      throw new OAuthError('invalid_client', 'The client is unknown, disabled or deleted, or it must authenticate with a secret.', 401);
    }
    client = { id: found.id, type: found.type, scopes: found.scopes, alg: found.id_token_signed_response_alg, secretId: null };
  }
  if (client.type === 'service') throw new OAuthError('unauthorized_client', 'A service client may use the client credentials grant only.', 400);
  await noteClientUsed(db, client.id, client.secretId);
  return { id: client.id, type: client.type, scopes: client.scopes, idTokenAlgorithm: client.alg ?? 'RS256' };
}

/**
 * The client credentials grant (RFC 6749 section 4.4): a service client proves it holds one of its
 * live secrets, and gets an access token for the scopes it asked for (all of its scopes when it
 * named none), signed like a user's and verifiable through the JWKS.
 */
export async function grantClientToken(db: Kysely<Database>, issuer: TokenIssuer, request: TokenRequest) {
  if (request.grantType === undefined) throw new OAuthError('invalid_request', 'grant_type is required.', 400);
  if (request.grantType !== 'client_credentials') throw new OAuthError('unsupported_grant_type', 'Only grant_type=client_credentials is supported.', 400);
  const credentials = request.credentials;
  if (!credentials) throw noCredentials();
  const secret = await clientOfSecret(db, credentials);
  // An app signs users in and acts only for them (API.md section 18); a public one has no secret to get this far.
  if (secret.type !== 'service') throw new OAuthError('unauthorized_client', 'An app (a confidential or public client) may not use the client credentials grant.', 400);
  const named = request.scope?.split(' ').filter(Boolean) ?? [];
  const asked = named.length === 0 ? secret.scopes : named;
  const missing = asked.filter((scope) => !secret.scopes.includes(scope));
  if (missing.length > 0) throw new OAuthError('invalid_scope', `The client does not hold ${missing.join(', ')}.`, 400);
  const scopes = [...new Set(asked)];
  await noteClientUsed(db, secret.client_id, secret.secret_id);
  return { access_token: issuer.signClientToken(secret.client_id, scopes, secret.token_generation), token_type: 'Bearer' as const, expires_in: issuer.accessTokenTtlSeconds, scope: scopes.join(' ') };
}
