import * as client from 'openid-client';
import { AppError } from '../http/errors.js';
import { isLoopbackHttp } from '../http/loopback-hosts.js';

/** How long the read of a discovery document may take, in seconds (API.md section 20: within 10 s). */
const DISCOVERY_TIMEOUT_SECONDS = 10;

const invalidProvider = (path: string, message: string) => new AppError('invalid_provider', `The provider cannot be used: ${message}.`, [{ path, message }]);

/**
 * The issuer as the service keeps it: an absolute https URL (http only on a loopback host, for
 * tests and a developer's machine), without query or fragment, which OpenID issuers never have.
 */
export function checkedIssuer(issuer: string): URL {
  const url = URL.canParse(issuer) ? new URL(issuer) : undefined;
  if (!url || !(url.protocol === 'https:' || isLoopbackHttp(url))) {
    throw invalidProvider('/issuer', 'issuer must be an https URL (http only for a loopback host)');
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw invalidProvider('/issuer', 'issuer must have no query, fragment or credentials');
  }
  return url;
}

/** What a failed read says, named for the admin who saved the issuer. */
function whatFailed(error: unknown): string {
  const code = error instanceof client.ClientError ? error.code : undefined;
  switch (code) {
    case 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED':
      return 'the discovery document names another issuer';
    case 'OAUTH_RESPONSE_IS_NOT_JSON':
    case 'OAUTH_PARSE_ERROR':
      return 'the discovery document is not JSON';
    case 'OAUTH_RESPONSE_IS_NOT_CONFORM':
      return 'the discovery document is unreachable: its URL did not answer 200';
    case 'OAUTH_INVALID_RESPONSE':
      return 'the discovery document is not a JSON object of provider metadata';
    default:
      if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) return `the discovery document is unreachable: no answer within ${DISCOVERY_TIMEOUT_SECONDS} s`;
      return 'the discovery document is unreachable';
  }
}

/**
 * Reads the provider's discovery document (`{issuer}/.well-known/openid-configuration`) with
 * openid-client, which also checks that its `issuer` is the one asked for, and checks that the
 * provider offers the authorization code flow. The document, or 400 `invalid_provider` naming
 * what failed. Run outside any transaction: it may take up to 10 s.
 */
export async function readDiscovery(issuer: string, clientId: string): Promise<Record<string, unknown>> {
  const url = checkedIssuer(issuer);
  let metadata: Record<string, unknown>;
  try {
    const configuration = await client.discovery(url, clientId, undefined, undefined, {
      timeout: DISCOVERY_TIMEOUT_SECONDS,
      ...(url.protocol === 'http:' ? { execute: [client.allowInsecureRequests] } : {}),
    });
    // As JSON holds it: the helpers openid-client adds are functions, which the column does not keep.
    metadata = JSON.parse(JSON.stringify(configuration.serverMetadata())) as Record<string, unknown>;
  } catch (error) {
    throw invalidProvider('/issuer', whatFailed(error));
  }
  const responseTypes = metadata.response_types_supported;
  if (!Array.isArray(responseTypes) || !responseTypes.includes('code')) {
    throw invalidProvider('/issuer', 'the provider offers no authorization code flow (response_types_supported lacks code)');
  }
  if (typeof metadata.authorization_endpoint !== 'string' || typeof metadata.token_endpoint !== 'string' || typeof metadata.jwks_uri !== 'string') {
    throw invalidProvider('/issuer', 'the discovery document lacks authorization_endpoint, token_endpoint or jwks_uri');
  }
  // The browser is sent to the authorization endpoint, and the service posts the client's secret to the token endpoint: https only (http on loopback, for tests).
  for (const name of ['authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const) {
    const endpoint = URL.canParse(metadata[name] as string) ? new URL(metadata[name] as string) : undefined;
    if (!endpoint || !(endpoint.protocol === 'https:' || isLoopbackHttp(endpoint))) throw invalidProvider('/issuer', `the discovery document's ${name} is not an https URL`);
  }
  return metadata;
}
