import type { ApiClientRow } from '../db/tables.js';
import { isLoopbackHttp } from '../http/loopback-hosts.js';

/** The parameters of an authorization request the service reads (API.md section 18); others are ignored. */
const PARAMETERS = ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'nonce', 'code_challenge', 'code_challenge_method', 'prompt', 'max_age', 'login_hint', 'ui_locales'] as const;
type Parameter = (typeof PARAMETERS)[number];
const PROMPTS = ['none', 'login', 'consent', 'create'] as const;
type Prompt = (typeof PROMPTS)[number];
/** RFC 7636 §4.2: the S256 challenge is 43 base64url characters; its grammar allows up to 128 unreserved characters. */
// An S256 challenge is the base64url of a SHA-256: always 43 characters; anything else could never be exchanged.
const CODE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** A request that may be answered: the app, where its reply goes, and what it asks. */
export interface AuthorizationRequest {
  client: ApiClientRow;
  /** The redirect URI as the request gave it (a loopback URI's port may differ from the registered one). */
  redirectUri: string;
  state: string | undefined;
  scopes: string[];
  nonce: string | null;
  codeChallenge: string;
  prompts: Prompt[];
  maxAgeSeconds: number | undefined;
  loginHint: string | undefined;
  uiLocales: string | undefined;
}

/** Why no page may answer the request, nor a redirect: the browser stays here (RFC 6749 §4.1.2.1). */
export type PageRefusal = 'unknown_app' | 'bad_redirect';

/** An error the app hears about at its redirect URI (RFC 6749 §4.1.2.1, with RFC 9207's `iss`). */
export interface RedirectError {
  redirectUri: string;
  state: string | undefined;
  error: 'invalid_request' | 'unsupported_response_type' | 'invalid_scope';
  description: string;
}

export type ReadRequest = { request: AuthorizationRequest } | { refusal: PageRefusal } | { redirectError: RedirectError };

/** The query of a request's URL as it came, `?` included (empty without one): what a page's links and form keep. */
export function queryOf(rawUrl: string): string {
  const mark = rawUrl.indexOf('?');
  return mark === -1 ? '' : rawUrl.slice(mark);
}

/** The request's query parameters, each with every value it was given. */
export function queryParameters(rawUrl: string): URLSearchParams {
  const mark = rawUrl.indexOf('?');
  return new URLSearchParams(mark === -1 ? '' : rawUrl.slice(mark + 1));
}

/**
 * Whether `given` is the registered `registered`, character for character, but for the port of
 * a loopback http URI, which a native app picks when it listens (RFC 8252 §7.3).
 */
export function redirectUriMatches(registered: string, given: string): boolean {
  if (registered === given) return true;
  let left: URL;
  let right: URL;
  try {
    left = new URL(registered);
    right = new URL(given);
  } catch {
    return false;
  }
  if (!isLoopbackHttp(left) || !isLoopbackHttp(right)) return false;
  // Only the port may differ, and the given URI must be written as a URL writes it (nothing else is normalised away).
  const withoutPort = (url: URL) => {
    const copy = new URL(url.href);
    copy.port = '';
    return copy.href;
  };
  return given === right.href && withoutPort(left) === withoutPort(right);
}

/**
 * Reads an authorization request (API.md section 18), in the order RFC 6749 §4.1.2.1 asks: the
 * app and its redirect URI first, whose faults are told to the person on a page and never sent
 * anywhere; then every other fault, sent to the redirect URI. `client` is the app `client_id`
 * names (given once), if any.
 */
export function readAuthorizationRequest(query: URLSearchParams, client: ApiClientRow | undefined): ReadRequest {
  if (!client || client.type === 'service' || client.status !== 'active' || client.deleted_at !== null) return { refusal: 'unknown_app' };
  const redirectUris = query.getAll('redirect_uri');
  const redirectUri = redirectUris.length === 1 ? redirectUris[0]! : undefined;
  if (redirectUri === undefined || !client.redirect_uris.some((registered) => redirectUriMatches(registered, redirectUri))) return { refusal: 'bad_redirect' };

  const states = query.getAll('state');
  const state = states[0];
  const fault = (error: RedirectError['error'], description: string): ReadRequest => ({ redirectError: { redirectUri, state, error, description } });
  const repeated = PARAMETERS.find((name) => query.getAll(name).length > 1);
  if (repeated) return fault('invalid_request', `${repeated} is given more than once.`);
  const one = (name: Parameter) => query.get(name) ?? undefined;

  const responseType = one('response_type');
  if (responseType === undefined) return fault('invalid_request', 'response_type is missing: send response_type=code.');
  if (responseType !== 'code') return fault('unsupported_response_type', 'Only response_type=code is supported.');
  const codeChallenge = one('code_challenge');
  if (codeChallenge === undefined) return fault('invalid_request', 'PKCE is required: send code_challenge and code_challenge_method=S256.');
  if (one('code_challenge_method') !== 'S256') return fault('invalid_request', 'code_challenge_method must be S256.');
  if (!CODE_CHALLENGE.test(codeChallenge)) return fault('invalid_request', 'code_challenge must be the base64url SHA-256 of the code verifier (43 characters).');

  const scope = one('scope');
  if (scope === undefined || scope.trim() === '') return fault('invalid_request', 'scope is missing.');
  const scopes = [...new Set(scope.split(' ').filter(Boolean))];
  const refused = scopes.find((name) => !client.scopes.includes(name));
  if (refused) return fault('invalid_scope', `The app may not ask for the scope ${refused}.`);

  const prompts = [...new Set((one('prompt') ?? '').split(' ').filter(Boolean))];
  const unknownPrompt = prompts.find((prompt) => !(PROMPTS as readonly string[]).includes(prompt));
  if (unknownPrompt) return fault('invalid_request', `prompt ${unknownPrompt} is not supported (none, login, consent, create).`);
  if (prompts.includes('none') && prompts.length > 1) return fault('invalid_request', 'prompt=none may not be combined with another prompt.');
  const maxAge = one('max_age');
  if (maxAge !== undefined && !/^\d{1,9}$/.test(maxAge)) return fault('invalid_request', 'max_age must be a whole number of seconds.');

  return {
    request: {
      client,
      redirectUri,
      state,
      scopes,
      nonce: one('nonce') ?? null,
      codeChallenge,
      prompts: prompts as Prompt[],
      maxAgeSeconds: maxAge === undefined ? undefined : Number(maxAge),
      loginHint: one('login_hint'),
      uiLocales: one('ui_locales'),
    },
  };
}

/** The app's redirect URI with the reply's parameters added (RFC 6749 §4.1.2, RFC 9207's `iss` beside them). */
export function replyUri(redirectUri: string, parameters: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(parameters)) if (value !== undefined) url.searchParams.append(name, value);
  return url.href;
}
