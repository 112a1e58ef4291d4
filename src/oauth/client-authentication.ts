import type { Kysely } from 'kysely';
import type { ClientType, Database } from '../db/tables.js';
import { CANONICAL_UUID } from '../http/common-schemas.js';
import { findUndeletedClient, findUsableSecret, noteClientUsed } from '../clients/client-service.js';
import { OAuthError, type ClientCredentials } from '../clients/token-service.js';
import { hashClientSecret, SECRET_PATTERN, secretMatches } from '../sessions/client-secrets.js';

/** A client the authorization server's endpoint knows now: who, of what type, with which scopes. */
export interface AuthenticatedClient {
  id: string;
  type: ClientType;
  scopes: readonly string[];
}

const invalidClient = (viaBasic: boolean, description = 'The client is unknown, disabled or deleted, or its secret is wrong, expired or deleted.') =>
  new OAuthError('invalid_client', description, 401, viaBasic ? { 'www-authenticate': 'Basic realm="shop-accounts", charset="UTF-8"' } : {});

/**
 * Client authentication at the revocation and introspection endpoints (RFC 6749 §2.3): a
 * confidential app or a service client proves one of its live secrets; a public app, which has
 * none, names itself by `client_id` alone, where `publicApps` allows (revocation: RFC 7009 §2.1).
 * A confidential app naming itself without its secret is refused like a wrong secret. The client
 * must be enabled. None of it is remembered: the database says, on each request.
 */
export async function authenticateClient(db: Kysely<Database>, credentials: ClientCredentials | undefined, publicApps: boolean): Promise<AuthenticatedClient> {
  if (!credentials) throw new OAuthError('invalid_client', 'Authenticate the client with HTTP Basic, or with client_id (and client_secret, unless a public app).', 401);
  const clientId = credentials.clientId.toLowerCase();
  if (credentials.clientSecret === '') {
    const client = CANONICAL_UUID.test(clientId) ? await findUndeletedClient(db, clientId) : undefined;
    if (!client || client.status !== 'active' || client.type !== 'public') throw invalidClient(credentials.viaBasic);
    if (!publicApps) throw invalidClient(credentials.viaBasic, 'A public app may not call this endpoint: only confidential apps and service clients, with a secret.');
    return { id: client.client_id, type: client.type, scopes: client.scopes };
  }
  const secret = SECRET_PATTERN.test(credentials.clientSecret) ? await findUsableSecret(db, hashClientSecret(credentials.clientSecret)) : undefined;
  if (!secret || secret.client_id !== clientId || !secretMatches(credentials.clientSecret, secret.secret_hash) || secret.status !== 'active') {
    throw invalidClient(credentials.viaBasic);
  }
  await noteClientUsed(db, secret.client_id, secret.secret_id);
  return { id: secret.client_id, type: secret.type, scopes: secret.scopes };
}
