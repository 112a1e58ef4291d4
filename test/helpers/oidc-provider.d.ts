/**
 * The little of oidc-provider (v9, which ships no types) that test/helpers/upstream-provider.ts
 * uses: a provider made for an issuer, and its Node request listener.
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
  }

  export default class Provider {
    constructor(issuer: string, configuration?: Configuration);
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
  }
}
