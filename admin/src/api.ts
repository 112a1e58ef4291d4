/**
 * The console's only back end is the public API, with the same tokens any client uses, through
 * the typed client in client/ (generated from /openapi.json): a path, parameter or body the
 * service does not accept fails to compile here.
 */
import { createShopClient, reply, type Schemas } from '../../client/shop-client';

export { entityTag, NetworkError, ProblemError as ApiError } from '../../client/shop-client';
export { reply };
export { userRoleValues as ROLES, userStatusValues as STATUSES, pathsApiClientsPostRequestBodyContentApplicationJsonScopesValues as SCOPES } from '../../client/api-types';
export { newPasswordLength } from '../../client/api-limits';

type Tokens = Pick<Schemas['TokenPair'], 'access_token' | 'refresh_token'>;

const STORAGE_KEY = 'shop-admin-tokens';
let tokens: Tokens | undefined = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null') ?? undefined;
let onSignedOut: () => void = () => {};

export const isSignedIn = () => tokens !== undefined;
export const whenSignedOut = (handler: () => void) => {
  onSignedOut = handler;
};

function storeTokens(next: Tokens | undefined) {
  tokens = next && { access_token: next.access_token, refresh_token: next.refresh_token };
  if (tokens) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(tokens));
  else sessionStorage.removeItem(STORAGE_KEY);
}

/** Token calls go without the access token, so a refused one never loops back into a refresh. */
const anonymous = createShopClient({ baseUrl: '' });

/** An expired access token is refreshed once; a refused refresh signs out. */
async function refreshTokens(): Promise<boolean> {
  if (!tokens) return false;
  const { data } = await anonymous.POST('/api/auth/refresh', { body: { refresh_token: tokens.refresh_token } });
  if (data) storeTokens(data);
  else {
    storeTokens(undefined);
    onSignedOut();
  }
  return data !== undefined;
}

export const client = createShopClient({ baseUrl: '', accessToken: () => tokens?.access_token, refresh: refreshTokens });

export async function signIn(email: string, password: string): Promise<void> {
  const { body } = await reply(anonymous.POST('/api/auth/login', { body: { email, password } }));
  storeTokens(body as Tokens);
}

export async function signOut(): Promise<void> {
  const refreshToken = tokens?.refresh_token;
  storeTokens(undefined);
  if (refreshToken) await anonymous.POST('/api/auth/logout', { body: { refresh_token: refreshToken } }).catch(() => {});
  onSignedOut();
}

export function replaceTokens(next: Tokens): void {
  storeTokens(next);
}

/** The API's shapes, as the OpenAPI document states them. */
export type User = Schemas['User'];
export type Variant = Schemas['Variant'];
export type LedgerEntry = Schemas['LedgerEntry'];
export type Session = Schemas['Session'];
export type StockMovement = Schemas['StockMovement'];
export type Reservation = Schemas['Reservation'];
export type ShopEvent = Schemas['Event'];
export type Webhook = Schemas['Webhook'];
export type Delivery = Schemas['WebhookDelivery'];
export type ApiClient = Schemas['ApiClient'];
export type ClientSecret = Schemas['ClientSecret'];
