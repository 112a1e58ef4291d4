/**
 * The service's typed client: openapi-fetch over the types openapi-typescript generates from
 * /openapi.json (./api-types.ts, written by `npm run openapi`; a test fails when it is stale).
 * The staff console uses it, and so can any TypeScript caller: copy this folder.
 */
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, paths } from './api-types.js';

export type Schemas = components['schemas'];
export type Problem = Schemas['Problem'];
export type ShopClient = Client<paths>;

export interface ShopClientOptions {
  /** Where the service is, e.g. `http://127.0.0.1:3000` (empty for the same origin). */
  baseUrl: string;
  /** The access token to send as `Authorization: Bearer …`, read before every request. */
  accessToken?: () => string | undefined;
  /**
   * Called once when a request with a token is answered 401 (an expired access token): return
   * true after storing fresh tokens, and the request is sent again with the new access token.
   */
  refresh?: () => Promise<boolean>;
  fetch?: typeof globalThis.fetch;
}

/** A 4xx or 5xx reply, as the service's RFC 9457 problem. */
export class ProblemError extends Error {
  constructor(readonly problem: Problem) {
    super(`${problem.code}: ${problem.detail}`);
  }
  /** The message for one field, by the JSON Pointer of the request body (`/email`). */
  fieldMessage(field: string): string | undefined {
    return this.problem.errors?.find((error) => error.path === `/${field}`)?.message;
  }
}

/** The ETag of a versioned resource read from a list, where no ETag header came with it (API.md: `"<version>"`). */
export const entityTag = (resource: { version: number }) => `"${resource.version}"`;

export function createShopClient(options: ShopClientOptions): ShopClient {
  // Called as a plain function: a browser's fetch throws "Illegal invocation" when called as a method of another object.
  const send = options.fetch ?? globalThis.fetch;
  const client = createClient<paths>({ baseUrl: options.baseUrl, headers: { accept: 'application/json' }, fetch: send });
  // The body of a sent request cannot be read again, so each one is kept until its reply is in.
  const unsent = new Map<string, Request>();
  const withToken = (request: Request) => {
    const token = options.accessToken?.();
    if (token) request.headers.set('authorization', `Bearer ${token}`);
    return request;
  };
  const authorization: Middleware = {
    onRequest({ request, id }) {
      const signed = withToken(request);
      if (options.refresh && signed.headers.has('authorization')) unsent.set(id, signed.clone());
      return signed;
    },
    async onResponse({ response, id }) {
      const again = unsent.get(id);
      unsent.delete(id);
      if (response.status !== 401 || !again || !options.refresh || !(await options.refresh())) return undefined;
      return send(withToken(again));
    },
    onError({ id }) {
      unsent.delete(id);
    },
  };
  client.use(authorization);
  return client;
}

/** What a successful call gives: its body and, for a single resource, its ETag. */
export interface Reply<T> {
  body: T;
  etag: string | null;
}

/**
 * Awaits an openapi-fetch call and returns its body and ETag, or throws the problem: callers
 * write `const { body } = await reply(client.GET('/api/users/{id}', …))`.
 */
export async function reply<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<Reply<T>> {
  const { data, error, response } = await call;
  if (!response.ok) {
    const problem = (error && typeof error === 'object' ? error : { status: response.status, code: 'unknown', detail: response.statusText }) as Problem;
    throw new ProblemError(problem);
  }
  return { body: data as T, etag: response.headers.get('etag') };
}
