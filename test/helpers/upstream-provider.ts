import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/** A person with an account at the upstream provider. */
export interface UpstreamAccount {
  sub: string;
  email: string;
  email_verified: boolean;
}

/** The registration the service holds at the upstream provider. */
export interface UpstreamClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
}

export interface UpstreamProvider {
  /** Its issuer, `http://127.0.0.1:<port>`: the discovery document is under it. */
  issuer: string;
  /** The same server under a host name its document does not name (`localhost`): an issuer that differs. */
  otherIssuer: string;
  /** The accounts it signs in; a test may add more. */
  accounts: Map<string, UpstreamAccount>;
  /**
   * Signs an ID token as the provider would (RS256, its key id), with the claims given: what a
   * test that alters a real ID token (another `aud`, `iss`, an expired one) signs again. With
   * `key`, another key under the same key id: a token the provider's JWKS does not verify.
   */
  signIdToken(claims: Record<string, unknown>, key?: KeyObject): string;
  stop(): Promise<void>;
}

/**
 * The upstream OpenID provider of the tests of API.md section 20: oidc-provider (the certified
 * implementation) on a loopback port in the test process, with the client registration and the
 * accounts the test chooses. It uses the code flow with PKCE, as the service will, and signs ID
 * tokens with an RSA key of its own made here (so it does not warn of development keys).
 */
export async function startUpstreamProvider(options: { client: UpstreamClient; accounts?: UpstreamAccount[]; redirectUriPrefix?: string }): Promise<UpstreamProvider> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  const issuer = `http://127.0.0.1:${port}`;
  const accounts = new Map((options.accounts ?? []).map((account) => [account.sub, account]));
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const provider = new Provider(issuer, {
    clients: [{ ...options.client, grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic' }],
    jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: 'upstream-rsa', use: 'sig', alg: 'RS256' }] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    // The claims asked for go into the ID token too, as Google's and Apple's do: the service reads the person from the validated ID token only.
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    findAccount: async (_context, sub) => {
      const account = accounts.get(sub);
      if (!account) return undefined;
      return { accountId: sub, claims: async () => ({ ...account }) };
    },
  });
  // The service's redirect URI names a provider id known only once the provider is made (after this server answers its discovery): the sign-in tests admit every URI under a prefix.
  const prefix = options.redirectUriPrefix;
  if (prefix !== undefined) provider.Client.prototype.redirectUriAllowed = (value: string) => value.startsWith(prefix);
  server.on('request', provider.callback());
  return {
    issuer,
    otherIssuer: `http://localhost:${port}`,
    accounts,
    signIdToken(claims, key = privateKey) {
      const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
      const input = `${part({ alg: 'RS256', kid: 'upstream-rsa', typ: 'JWT' })}.${part(claims)}`;
      return `${input}.${sign('sha256', Buffer.from(input), key).toString('base64url')}`;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
