/** The console's only back end is the public API, with the same tokens any client uses. */
import type { Static } from '@sinclair/typebox';
import type { EventSchema } from '../../src/events/event-schemas';
import type { DeliverySchema, WebhookSchema } from '../../src/events/webhook-schemas';
import type { Page } from '../../src/http/pagination';
import type { ReservationResponse } from '../../src/inventory/reservation-schemas';
import type { StockMovementSchema } from '../../src/inventory/stock-schemas';
import type { SessionSchema } from '../../src/sessions/session-schemas';
import type { LedgerEntrySchema } from '../../src/users/balance-schemas';
import type { UserResponse } from '../../src/users/user-schemas';
import type { VariantResponse } from '../../src/variants/variant-schemas';

export interface Problem {
  status: number;
  code: string;
  detail: string;
  errors?: { path: string; message: string }[];
}

export class ApiError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail);
  }
  /** The message for one field, by the JSON Pointer of the request body (`/email`). */
  fieldMessage(field: string): string | undefined {
    return this.problem.errors?.find((error) => error.path === `/${field}`)?.message;
  }
}

interface Tokens {
  access_token: string;
  refresh_token: string;
}

const STORAGE_KEY = 'shop-admin-tokens';
let tokens: Tokens | undefined = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null') ?? undefined;
let onSignedOut: () => void = () => {};

export const isSignedIn = () => tokens !== undefined;
export const whenSignedOut = (handler: () => void) => {
  onSignedOut = handler;
};

function storeTokens(next: Tokens | undefined) {
  tokens = next;
  if (next) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(next));
  else sessionStorage.removeItem(STORAGE_KEY);
}

async function send(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(path, {
    method,
    headers: {
      accept: 'application/json',
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(tokens ? { authorization: `Bearer ${tokens.access_token}` } : {}),
      ...headers,
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

async function refreshTokens(): Promise<boolean> {
  if (!tokens) return false;
  const response = await fetch('/api/auth/refresh', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ refresh_token: tokens.refresh_token }),
  });
  if (!response.ok) return false;
  storeTokens(await response.json());
  return true;
}

export interface Reply<T> {
  body: T;
  etag: string | null;
}

/** Calls the API; an expired access token is refreshed once, and a 401 after that signs out. */
export async function api<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply<T>> {
  let response = await send(method, path, body, headers);
  if (response.status === 401 && tokens && (await refreshTokens())) response = await send(method, path, body, headers);
  if (response.status === 401 && tokens) {
    storeTokens(undefined);
    onSignedOut();
  }
  if (!response.ok) {
    const problem = (await response.json().catch(() => ({ status: response.status, code: 'unknown', detail: response.statusText }))) as Problem;
    throw new ApiError(problem);
  }
  const text = await response.text();
  return { body: (text ? JSON.parse(text) : undefined) as T, etag: response.headers.get('etag') };
}

export async function signIn(email: string, password: string): Promise<void> {
  const response = await fetch('/api/auth/login', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  if (!response.ok) throw new ApiError((await response.json()) as Problem);
  storeTokens(await response.json());
}

export async function signOut(): Promise<void> {
  const refreshToken = tokens?.refresh_token;
  storeTokens(undefined);
  if (refreshToken) {
    await fetch('/api/auth/logout', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ refresh_token: refreshToken }),
    }).catch(() => {});
  }
  onSignedOut();
}

export function replaceTokens(next: Tokens): void {
  storeTokens(next);
}

/** The API's shapes, typed from the server's own TypeBox schemas, so the console cannot drift from them. */
export type User = UserResponse;
export type Variant = VariantResponse;
export type LedgerEntry = Static<typeof LedgerEntrySchema>;
export type Session = Static<typeof SessionSchema>;
export type StockMovement = Static<typeof StockMovementSchema>;
export type Reservation = ReservationResponse;
export type ShopEvent = Static<typeof EventSchema>;
export type Webhook = Static<typeof WebhookSchema>;
export type Delivery = Static<typeof DeliverySchema>;
export type { Page };
