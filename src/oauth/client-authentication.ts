import type { Kysely } from 'kysely';
import type { ClientType, Database, IdTokenAlgorithm } from '../db/tables.js';
import { CANONICAL_UUID } from '../http/common-schemas.js';
import { findUndeletedClient, findUsableSecret, noteClientUsed } from '../clients/client-service.js';
import { hashClientSecret, SECRET_PATTERN, secretMatches } from '../sessions/client-secrets.js';
import { invalidClient, noCredentials, OAuthError } from './oauth-errors.js';

/** How the client said who it is: HTTP Basic, or the form's fields. */
export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
  viaBasic: boolean;
}

/** A client the authorization server's endpoint knows now: who, of what type, with which scopes. */
export interface AuthenticatedClient {
  id: string;
  type: ClientType;
  /** The scopes it may ask for now. */
  scopes: string[];
  /** What its ID tokens are signed with (an app's; RS256 when unset). */
  idTokenAlgorithm: IdTokenAlgorithm;
  /** A first-party app signs users in without asking their consent. */
  firstParty: boolean;
  /** A service client's tokens carry it: disabling the client moves it on (section 11). */
  tokenGeneration: number;
}

/** An app authenticated at the token endpoint, as the code and refresh grants need it. */
export type AuthenticatedApp = AuthenticatedClient & { type: Exclude<ClientType, 'service'> };

/**
 * The client a live secret of an active client names, or 401 `invalid_client` (unknown, wrong,
 * expired, deleted, disabled alike): the one check of a client's secret.
 */
async function clientOfSecret(db: Kysely<Database>, credentials: ClientCredentials) {
  const secret = SECRET_PATTERN.test(credentials.clientSecret) ? await findUsableSecret(db, hashClientSecret(credentials.clientSecret)) : undefined;
  if (!secret || secret.client_id !== credentials.clientId.toLowerCase() || !secretMatches(credentials.clientSecret, secret.secret_hash) || secret.status !== 'active') {
    throw invalidClient(credentials.viaBasic);
  }
  return secret;
}

/**
 * Client authentication at the authorization server's endpoints (RFC 6749 §2.3; OAuth 2.1 §2.4):
 * a confidential app or a service client proves one of its live secrets (HTTP Basic or the
 * form); a public app, which has none, names itself by `client_id` alone in the form (`none`; an
 * empty `client_secret` counts as none), where `publicApps` allows. A confidential app naming
 * itself without its secret is refused like a stranger. The client must be enabled. None of it
 * is remembered: the database says, on each request.
 */
export async function authenticateClient(db: Kysely<Database>, credentials: ClientCredentials | undefined, publicApps: boolean): Promise<AuthenticatedClient> {
  if (!credentials) throw noCredentials();
  if (!credentials.viaBasic && credentials.clientSecret === '') {
    const clientId = credentials.clientId.toLowerCase();
    const client = CANONICAL_UUID.test(clientId) ? await findUndeletedClient(db, clientId) : undefined;
    if (!client || client.status !== 'active' || client.type !== 'public') {
      throw new OAuthError('invalid_client', 'The client is unknown, disabled or deleted, or it must authenticate with a secret.', 401);
    }
    if (!publicApps) throw invalidClient(false, 'A public app may not call this endpoint: only confidential apps and service clients, with a secret.');
    await noteClientUsed(db, client.client_id, null);
    return { id: client.client_id, type: client.type, scopes: client.scopes, idTokenAlgorithm: client.id_token_signed_response_alg ?? 'RS256', firstParty: client.first_party, tokenGeneration: client.token_generation };
  }
  const secret = await clientOfSecret(db, credentials);
  await noteClientUsed(db, secret.client_id, secret.secret_id);
  return { id: secret.client_id, type: secret.type, scopes: secret.scopes, idTokenAlgorithm: secret.id_token_signed_response_alg ?? 'RS256', firstParty: secret.first_party, tokenGeneration: secret.token_generation };
}

/**
 * The client of a code or refresh grant (API.md section 18): an app, confidential by a secret or
 * public by its id. A service client that authenticated is 400 `unauthorized_client`.
 */
export async function authenticateApp(db: Kysely<Database>, credentials: ClientCredentials | undefined): Promise<AuthenticatedApp> {
  const client = await authenticateClient(db, credentials, true);
  if (client.type === 'service') throw new OAuthError('unauthorized_client', 'A service client may use the client credentials grant only.', 400);
  return client as AuthenticatedApp;
}
