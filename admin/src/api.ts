/**
 * The console's only back end is the public API, with the same tokens any client uses, through
 * the typed client in client/ (generated from /openapi.json): a path, parameter or body the
 * service does not accept fails to compile here.
 */
import { createShopClient, ProblemError, reply, type Schemas } from '../../client/shop-client';

export { entityTag, NetworkError, ProblemError as ApiError } from '../../client/shop-client';
export { reply };
import type { PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/browser';
import type { paths } from '../../client/api-types';
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

/** Asks the person for a second factor (step-up.tsx's dialog); true once the session is verified. */
let onStepUp: () => Promise<boolean> = async () => false;
export const whenStepUpNeeded = (handler: () => Promise<boolean>) => {
  onStepUp = handler;
};

// A sensitive action answered 403 step_up_required waits for the dialog and then goes again,
// once, unchanged: the form that sent it keeps what was typed and sees only the final answer.
export const client = createShopClient({ baseUrl: '', accessToken: () => tokens?.access_token, refresh: refreshTokens, stepUp: () => onStepUp() });

/** One of a second factor's answers, as /api/auth/login/mfa and /api/auth/mfa/verify take them. */
export type SecondFactorProof = NonNullable<paths['/api/auth/mfa/verify']['post']['requestBody']>['content']['application/json'];
export type SecondFactorMethod = 'totp' | 'webauthn' | 'recovery_code';

/** Signs in, or, for a user with a second factor, says which it may answer (403 `mfa_required`). */
export async function signIn(email: string, password: string): Promise<{ mfaToken: string; methods: SecondFactorMethod[] } | undefined> {
  try {
    const { body } = await reply(anonymous.POST('/api/auth/login', { body: { email, password } }));
    storeTokens(body as Tokens);
    return undefined;
  } catch (caught) {
    if (caught instanceof ProblemError && caught.problem.code === 'mfa_required' && caught.problem.mfa_token) {
      return { mfaToken: caught.problem.mfa_token, methods: caught.problem.methods ?? [] };
    }
    throw caught;
  }
}

/** A passkey challenge: with an mfa_token for a login's second step, without one for a step-up of this session. */
export async function passkeyOptions(mfaToken?: string): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const api = mfaToken ? anonymous : client;
  const { body } = await reply(api.POST('/api/auth/mfa/webauthn/authentication-options', { body: mfaToken ? { mfa_token: mfaToken } : {} }));
  return body as PublicKeyCredentialRequestOptionsJSON;
}

/** The second step of a login: the session starts once the factor is accepted. */
export async function finishSignIn(mfaToken: string, proof: SecondFactorProof): Promise<void> {
  const { body } = await reply(anonymous.POST('/api/auth/login/mfa', { body: { mfa_token: mfaToken, ...proof } }));
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
export type MfaFactor = Schemas['MfaFactor'];
export type VariantImport = Schemas['VariantImport'];
export type SecondFactorStatus = paths['/api/auth/mfa']['get']['responses'][200]['content']['application/json'];
export type StockLocation = Schemas['Location'];
export type VariantStock = Schemas['VariantStock'];
