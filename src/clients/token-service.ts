import type { Kysely } from 'kysely';
import type { ClientType, Database, IdTokenAlgorithm } from '../db/tables.js';
import { CANONICAL_UUID } from '../http/common-schemas.js';
import { hashClientSecret, SECRET_PATTERN, secretMatches } from '../sessions/client-secrets.js';
import type { TokenIssuer } from '../sessions/token-issuer.js';
import { findUsableSecret, noteClientUsed } from './client-repository.js';

/** An error of the token endpoint in RFC 6749 section 5.2's words. */
export class OAuthError extends Error {
  constructor(
    readonly error: 'invalid_request' | 'invalid_client' | 'invalid_grant' | 'unauthorized_client' | 'unsupported_grant_type' | 'invalid_scope' | 'insufficient_scope' | 'rate_limited',
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

export const invalidClient = (viaBasic: boolean, description = 'The client is unknown, disabled or deleted, or its secret is wrong, expired or deleted.') =>
  new OAuthError('invalid_client', description, 401, viaBasic ? { 'www-authenticate': 'Basic realm="shop-accounts", charset="UTF-8"' } : {});

export const noCredentials = () => new OAuthError('invalid_client', 'Authenticate the client with HTTP Basic, or with client_id and client_secret.', 401);

/**
 * The client a live secret of an active client names, or 401 `invalid_client` (unknown, wrong,
 * expired, deleted, disabled alike): the one check of a client's secret, for every endpoint of
 * the authorization server (oauth/client-authentication.ts).
 */
export async function clientOfSecret(db: Kysely<Database>, credentials: ClientCredentials) {
  const secret = SECRET_PATTERN.test(credentials.clientSecret) ? await findUsableSecret(db, hashClientSecret(credentials.clientSecret)) : undefined;
  if (!secret || secret.client_id !== credentials.clientId.toLowerCase() || !secretMatches(credentials.clientSecret, secret.secret_hash) || secret.status !== 'active') {
    throw invalidClient(credentials.viaBasic);
  }
  return secret;
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
