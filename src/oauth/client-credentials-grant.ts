import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import type { TokenIssuer } from '../sessions/token-issuer.js';
import { authenticateClient, type ClientCredentials } from './client-authentication.js';
import { OAuthError } from './oauth-errors.js';

/**
 * The client credentials grant (RFC 6749 section 4.4): a service client proves it holds one of its
 * live secrets, and gets an access token for the scopes it asked for (all of its scopes when it
 * named none), signed like a user's and verifiable through the JWKS. An app, confidential or
 * public, signs users in and acts only for them (API.md section 18): `unauthorized_client`.
 */
export async function grantClientToken(db: Kysely<Database>, issuer: TokenIssuer, scope: string | undefined, credentials: ClientCredentials | undefined) {
  const client = await authenticateClient(db, credentials, true);
  if (client.type !== 'service') throw new OAuthError('unauthorized_client', 'An app (a confidential or public client) may not use the client credentials grant.', 400);
  const named = scope?.split(' ').filter(Boolean) ?? [];
  const asked = named.length === 0 ? client.scopes : named;
  const missing = asked.filter((name) => !client.scopes.includes(name));
  if (missing.length > 0) throw new OAuthError('invalid_scope', `The client does not hold ${missing.join(', ')}.`, 400);
  const scopes = [...new Set(asked)];
  return { access_token: issuer.signClientToken(client.id, scopes, client.tokenGeneration), token_type: 'Bearer' as const, expires_in: issuer.accessTokenTtlSeconds, scope: scopes.join(' ') };
}
