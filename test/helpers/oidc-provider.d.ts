/**
 * The little of oidc-provider (v9, which ships no types) that test/helpers/upstream-provider.ts
 * uses: a provider made for an issuer, its Node request listener, and its Client class (whose
 * redirect URI check the sign-in tests widen).
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  interface Account {
    accountId: string;
    claims(): Promise<Record<string, unknown>>;
  }

  interface Configuration {
    clients?: Record<string, unknown>[];
    jwks?: { keys: Record<string, unknown>[] };
    claims?: Record<string, string[]>;
    pkce?: { required?: (context: unknown, client: unknown) => boolean };
    features?: Record<string, unknown>;
    findAccount?: (context: unknown, sub: string) => Promise<Account | undefined>;
    conformIdTokenClaims?: boolean;
  }

  export default class Provider {
    constructor(issuer: string, configuration?: Configuration);
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
    readonly Client: { prototype: { redirectUriAllowed(value: string): boolean } };
  }
}
