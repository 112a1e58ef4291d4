import * as client from 'openid-client';
import type { IdentityProviderRow } from '../db/tables.js';
import { isLoopbackHttp } from '../http/loopback-hosts.js';
import type { SecretsAtRest } from '../sessions/secrets-at-rest.js';
import { signAppleClientSecret } from './apple-client-secret.js';

/** How long a request to the provider (its token endpoint, its keys) may take, in seconds. */
const PROVIDER_TIMEOUT_SECONDS = 10;

/**
 * The openid-client configuration of a provider, from its stored discovery document (read when
 * its issuer was saved, and again hourly: no request to the provider here) and its credential,
 * unsealed: its client secret, or for Apple a client secret JWT signed afresh for this exchange.
 * The client authenticates as the provider's document prefers: `client_secret_basic` when it
 * offers it (the default of OpenID Connect Discovery when it says nothing), else
 * `client_secret_post`.
 */
export function providerConfiguration(provider: IdentityProviderRow, secrets: SecretsAtRest): client.Configuration {
  const metadata = provider.discovery as unknown as client.ServerMetadata;
  const secret =
    provider.client_secret !== null
      ? secrets.open(provider.client_secret)
      : signAppleClientSecret({ teamId: provider.apple_team_id ?? '', keyId: provider.apple_key_id ?? '', clientId: provider.client_id, privateKeyPem: secrets.open(provider.apple_private_key ?? '') });
  const methods = metadata.token_endpoint_auth_methods_supported;
  const authentication = methods === undefined || methods.includes('client_secret_basic') ? client.ClientSecretBasic(secret) : client.ClientSecretPost(secret);
  const configuration = new client.Configuration(metadata, provider.client_id, undefined, authentication);
  configuration.timeout = PROVIDER_TIMEOUT_SECONDS;
  // openid-client leaves the signature of an ID token from the token endpoint unchecked (OpenID Connect Core 3.1.3.7 lets TLS stand in for it);
  // API.md section 20 asks for it by the provider's JWKS, and a test's altered token proved it otherwise passes.
  client.enableNonRepudiationChecks(configuration);
  // Plain http only for a loopback issuer (tests, a developer's machine), as the admin API admits.
  if (isLoopbackHttp(new URL(provider.issuer))) client.allowInsecureRequests(configuration);
  return configuration;
}
