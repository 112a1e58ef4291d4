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
   * Called when a request with a token is answered 401 `invalid_token` (an expired access
   * token): return true after storing fresh tokens, and the request is sent again, once, with
   * the new access token. Requests answered so at the same time share one call, and one sent
   * with a token refreshed since is sent again without another.
   */
  refresh?: () => Promise<boolean>;
  /**
   * Called when a request is answered 403 `step_up_required` (a sensitive action, and the
   * session's second factor not verified lately): return true once the caller has verified it
   * (`POST /api/auth/mfa/verify`), and the request is sent again, once, unchanged. Requests
   * answered so at the same time share one call.
   */
  stepUp?: () => Promise<boolean>;
  fetch?: typeof globalThis.fetch;
}

/** A 4xx or 5xx reply, as the service's RFC 9457 problem. */
export class ProblemError extends Error {
  constructor(readonly problem: Problem) {
    super(`${problem.code}: ${problem.detail}`);
  }
  /**
   * The message for one top-level field of the request body (`email` for `/email`), with those
   * for items within it (`/events/0`), or undefined when it has none.
   */
  fieldMessage(field: string): string | undefined {
    const messages = (this.problem.errors ?? []).flatMap((error) => {
      if (error.path === `/${field}`) return [error.message];
      if (!error.path.startsWith(`/${field}/`)) return [];
      // Within a list, the item by its place as people count (`/events/1` is item 2).
      const within = error.path.slice(field.length + 2);
      return [`${/^\d+$/.test(within) ? `Item ${Number(within) + 1}` : within}: ${error.message}`];
    });
    return messages.length > 0 ? messages.join(' ') : undefined;
  }
}

/** No reply came (the service is down or unreachable, the connection failed): the request may be tried again. */
export class NetworkError extends Error {
  constructor(readonly reason: unknown) {
    super(`no reply: ${reason instanceof Error ? reason.message : String(reason)}`);
  }
}

/** The ETag of a versioned resource read from a list, where no ETag header came with it (API.md: `"<version>"`). */
export const entityTag = (resource: { version: number }) => `"${resource.version}"`;

export function createShopClient(options: ShopClientOptions): ShopClient {
  // Called as a plain function: a browser's fetch throws "Illegal invocation" when called as a method of another object.
  const fetchOnce = options.fetch ?? globalThis.fetch;
  // A request that got no reply at all is a NetworkError, whatever words the browser uses for it.
  const send = (request: Request) =>
    fetchOnce(request).catch((error: unknown) => {
      throw error instanceof Error && error.name === 'AbortError' ? error : new NetworkError(error);
    });
  const client = createClient<paths>({ baseUrl: options.baseUrl, headers: { accept: 'application/json' }, fetch: send });
  // The body of a sent request cannot be read again, so each one is kept, with the token it carried, until its reply is in.
  const pending = new Map<string, { request: Request; token: string }>();
  const refreshOnce = sharedWhileRunning();
  const stepUpOnce = sharedWhileRunning();
  const withToken = (request: Request) => {
    const token = options.accessToken?.();
    if (token) request.headers.set('authorization', `Bearer ${token}`);
    return request;
  };
  const authorization: Middleware = {
    onRequest({ request, id }) {
      const token = options.accessToken?.();
      if (!token) return request;
      request.headers.set('authorization', `Bearer ${token}`);
      if (options.refresh || options.stepUp) pending.set(id, { request: request.clone(), token });
      return request;
    },
    async onResponse({ response, id }) {
      const sent = pending.get(id);
      pending.delete(id);
      if (!sent) return undefined;
      // Each is tried at most once, in this order: an expired token first, then a step-up (a
      // request sent again after a refresh may be the one that meets step_up_required).
      let reply = response;
      let sentAgain = false;
      const again = () => {
        sentAgain = true;
        return send(withToken(sent.request.clone()));
      };
      // Only a refused access token is worth a refresh: a wrong password or a spent refresh token is also 401.
      if (reply.status === 401 && options.refresh && (await problemCode(reply)) === 'invalid_token') {
        // A request sent before another one's refresh goes again with the new token, without a refresh of its own.
        const current = options.accessToken?.();
        const refreshed = (current !== undefined && current !== sent.token) || (await refreshOnce(options.refresh));
        if (!refreshed || !options.accessToken?.()) return undefined;
        reply = await again();
      }
      if (reply.status === 403 && options.stepUp && (await problemCode(reply)) === 'step_up_required') {
        if (await stepUpOnce(options.stepUp)) reply = await again();
      }
      return sentAgain ? reply : undefined;
    },
    onError({ id }) {
      pending.delete(id);
    },
  };
  client.use(authorization);
  return client;
}

/** A call made once for all who ask while it runs (one refresh, one step-up dialog). */
function sharedWhileRunning() {
  let running: Promise<boolean> | undefined;
  return (call: () => Promise<boolean>) => {
    running ??= call().finally(() => {
      running = undefined;
    });
    return running;
  };
}

async function problemCode(response: Response): Promise<string | undefined> {
  try {
    const body: unknown = await response.clone().json();
    return body && typeof body === 'object' && 'code' in body && typeof body.code === 'string' ? body.code : undefined;
  } catch {
    return undefined;
  }
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
