import { createHash, randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import * as client from 'openid-client';
import type { Database, SessionRow, UserRow } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import type { EventContext } from '../events/event-recorder.js';
import { secondStepOf, type SecondStep } from '../mfa/mfa-login-service.js';
import type { SecretsAtRest } from '../sessions/secrets-at-rest.js';
import type { TokenIssuer } from '../sessions/token-issuer.js';
import { FEDERATED_ONLY, openSession, type ClientDetails, type SessionOptions } from '../sessions/token-pairs.js';
import type { MailSettings } from '../users/account-emails.js';
import { createUser, findUserByEmail, findUserById } from '../users/user-service.js';
import { deleteStaleFederatedSignIns, insertFederatedSignIn, spendFederatedSignIn } from './federated-signin-repository.js';
import { linkIdentity } from './identity-service.js';
import { connectIdentity } from './identity-connect-service.js';
import { lockIdentityBySubject, lockIdentitySubject, markIdentityUsed } from './identity-repository.js';
import { enabledProviderButtons, enabledProviderById, shareEnabledProvider } from './provider-repository.js';
import { withOpenid } from './provider-credentials.js';
import { providerConfiguration } from './provider-client.js';
import { ANY_CASE_UUID } from '../http/common-schemas.js';

/** A sign-in under way lives 10 minutes: time enough to sign in at the provider. */
const ATTEMPT_SECONDS = 10 * 60;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The redirect URI of a provider, the one an admin registers there (API.md section 20). */
export const callbackUrlOf = (publicUrl: string, providerId: string) => `${publicUrl}/oauth/callback/${providerId}`;

/** Why a federated sign-in ended on the error page; the page says the same for each, never whether an account exists. */
export type FederatedRefusal = 'attempt' | 'provider' | 'exchange' | 'no_account' | 'suspended';


/** The enabled provider of this id, or undefined (unknown, deleted or disabled, or no id at all). */
const enabledProvider = (db: Kysely<Database>, providerId: string) => (ANY_CASE_UUID.test(providerId) ? enabledProviderById(db, providerId) : Promise.resolve(undefined));

/**
 * The start of a sign-in at a provider (API.md section 20): a random `state`, `nonce` and PKCE
 * verifier, kept in the database with the browser's binding and the authorization request to
 * carry on (any instance may get the callback), then the provider's authorization URL, built by
 * openid-client from the stored discovery document. Undefined for a provider that is not there
 * or is disabled (its button is gone).
 */
export async function startFederatedSignIn(
  db: Kysely<Database>,
  secrets: SecretsAtRest,
  start: { providerId: string; browserHash: string; authorizationQuery: string; publicUrl: string; linking?: SignedInConnection },
): Promise<URL | undefined> {
  const provider = await enabledProvider(db, start.providerId);
  if (!provider) return undefined;
  const state = client.randomState();
  const nonce = client.randomNonce();
  const codeVerifier = client.randomPKCECodeVerifier();
  const now = new Date();
  await insertFederatedSignIn(db, {
    id: randomUUID(),
    provider_id: provider.id,
    state_hash: sha256(state),
    nonce,
    code_verifier: codeVerifier,
    browser_hash: start.browserHash,
    authorization_query: start.authorizationQuery,
    linking_user_id: start.linking?.userId ?? null,
    linking_session_id: start.linking?.sessionId ?? null,
    created_at: now,
    expires_at: new Date(now.getTime() + ATTEMPT_SECONDS * 1000),
  });
  return client.buildAuthorizationUrl(providerConfiguration(provider, secrets), {
    redirect_uri: callbackUrlOf(start.publicUrl, provider.id),
    scope: withOpenid(provider.scopes).join(' '),
    state,
    nonce,
    code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    // Apple sends the name and email scopes' answer only as a form post (the callback's POST takes it).
    ...(provider.apple_team_id ? { response_mode: 'form_post' } : {}),
  });
}

/** A signed-in user connecting a provider from the profile: the user and the session that pressed "Connect". */
export interface SignedInConnection {
  userId: string;
  sessionId: string;
}

/** What the provider's validated ID token says of the person. */
export interface ProvidedIdentity {
  subject: string;
  email: string | null;
  emailVerified: boolean;
  name: string | null;
}

export interface FederatedSettings {
  secrets: SecretsAtRest;
  publicUrl: string;
  registrationOpen: boolean;
  mail: MailSettings;
}

type Finish = { session: SessionRow } | { secondStep: SecondStep } | { refusal: FederatedRefusal } | { connected: true };

/**
 * The callback (API.md section 20). The attempt its `state` names, for this provider, live and
 * bound to this browser, is spent first, in a statement of its own: a replayed `state` fails even
 * when the exchange fails later. Then openid-client exchanges the code (PKCE verifier, the
 * provider's `iss` parameter) and validates the ID token (signature by the provider's JWKS,
 * `iss`, `aud`, `exp`, `nonce`): none of it is done here. The identity's user is then found,
 * linked or made, and the sign-in ends as any other: the session, or the second step for a user
 * with a second factor. An attempt started by "Connect" from the profile links the identity to
 * its signed-in user instead (`connected`), and signs nobody in. The provider's tokens are dropped.
 */
export async function finishFederatedSignIn(
  db: Kysely<Database>,
  issuer: TokenIssuer,
  settings: FederatedSettings,
  callback: { providerId: string; currentUrl: URL; browserHash: string },
  clientDetails: ClientDetails,
  context: EventContext,
  sessionOptions: SessionOptions,
): Promise<Finish & { authorizationQuery?: string; connecting?: boolean }> {
  const state = callback.currentUrl.searchParams.get('state');
  if (!state || !ANY_CASE_UUID.test(callback.providerId)) return { refusal: 'attempt' };
  const attempt = await inTransaction(db, (trx) => spendFederatedSignIn(trx, { stateHash: sha256(state), providerId: callback.providerId, browserHash: callback.browserHash }));
  if (!attempt) return { refusal: 'attempt' };
  const provider = await enabledProvider(db, callback.providerId);
  const connecting = attempt.linking_session_id !== null;
  if (!provider) return { refusal: 'provider', authorizationQuery: attempt.authorization_query, connecting };
  let identity: ProvidedIdentity;
  try {
    const tokens = await client.authorizationCodeGrant(providerConfiguration(provider, settings.secrets), callback.currentUrl, {
      pkceCodeVerifier: attempt.code_verifier,
      expectedState: state,
      expectedNonce: attempt.nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims();
    if (!claims) return { refusal: 'exchange', authorizationQuery: attempt.authorization_query, connecting };
    identity = {
      subject: claims.sub,
      email: typeof claims.email === 'string' ? claims.email : null,
      // Only a boolean true counts: some providers send the string "true", which is not the claim's type.
      emailVerified: claims.email_verified === true,
      name: typeof claims.name === 'string' ? claims.name : null,
    };
  } catch {
    // A code refused, an ID token that does not validate, an error from the provider, no answer in 10 s: all the same page.
    return { refusal: 'exchange', authorizationQuery: attempt.authorization_query, connecting };
  }
  if (attempt.linking_user_id !== null && attempt.linking_session_id !== null) {
    const linking = { userId: attempt.linking_user_id, sessionId: attempt.linking_session_id };
    const connected = await inTransaction(db, (trx) => connectIdentity(trx, linking, provider.id, identity, context));
    return connected ? { connected: true, connecting: true } : { refusal: 'no_account', connecting: true };
  }
  const finish = await inTransaction(db, (trx) => signInIdentity(trx, issuer, settings, { ...provider, identity }, clientDetails, context, sessionOptions));
  return { ...finish, authorizationQuery: attempt.authorization_query };
}

/**
 * The identity's user (API.md section 20, "Linking"), under the identity's advisory lock: two
 * first sign-ins of one new identity at once make one account.
 */
async function signInIdentity(
  trx: Transaction<Database>,
  issuer: TokenIssuer,
  settings: FederatedSettings,
  provider: { id: string; link_by_verified_email: boolean; identity: ProvidedIdentity },
  clientDetails: ClientDetails,
  context: EventContext,
  sessionOptions: SessionOptions,
): Promise<Finish> {
  const { identity } = provider;
  // Disabled or deleted during the exchange: its callbacks fail (section 20), and a deletion waits for no link of ours.
  const enabled = await shareEnabledProvider(trx, provider.id);
  if (!enabled) return { refusal: 'provider' };
  await lockIdentitySubject(trx, provider.id, identity.subject);
  const known = await lockIdentityBySubject(trx, provider.id, identity.subject);
  let user: UserRow | undefined;
  if (known) {
    user = await findUserById(trx, known.user_id);
    if (!user) return { refusal: 'no_account' };
    // A refused sign-in leaves nothing behind, not even the identity's last use.
    if (user.status !== 'active') return { refusal: 'suspended' };
    await markIdentityUsed(trx, known.id);
  } else {
    const linked = await userToLink(trx, settings, provider.link_by_verified_email, identity, context);
    if ('refusal' in linked) return linked;
    user = linked.user;
    // An account that was there gains a way in, and its owner is told; a new one was made by this identity.
    const notify = linked.existing ? { to: user.email, providerName: enabled.name } : undefined;
    await linkIdentity(trx, { userId: user.id, providerId: provider.id, subject: identity.subject, email: identity.email, usedNow: true, notify }, { ...context, actorId: user.id, actorType: 'user' });
  }
  if (user.status !== 'active') return { refusal: 'suspended' };
  const secondStep = await secondStepOf(trx, user, 'fed');
  if (secondStep) return { secondStep };
  const { session } = await openSession(trx, issuer, user.id, clientDetails, FEDERATED_ONLY, undefined, sessionOptions);
  return { session };
}

/**
 * The user a new identity is linked to: the account of its email only when the provider says
 * `email_verified: true`, the provider has `link_by_verified_email`, and the account's role is
 * `user` (a manager or admin links only from a signed-in session); with no account of that email
 * and registration on, a new account (`email_verified` as the provider says, no password).
 */
async function userToLink(
  trx: Transaction<Database>,
  settings: FederatedSettings,
  linkByVerifiedEmail: boolean,
  identity: ProvidedIdentity,
  context: EventContext,
): Promise<{ user: UserRow; existing: boolean } | { refusal: FederatedRefusal }> {
  if (identity.email === null) return { refusal: 'no_account' };
  const existing = await findUserByEmail(trx, identity.email);
  if (existing) {
    // A suspended account gains no link: the refusal must leave nothing behind.
    if (identity.emailVerified && linkByVerifiedEmail && existing.role === 'user' && existing.status === 'active') return { user: existing, existing: true };
    return { refusal: 'no_account' };
  }
  if (!settings.registrationOpen) return { refusal: 'no_account' };
  const id = randomUUID();
  const name = (identity.name ?? identity.email.split('@')[0] ?? '').slice(0, 100).trim() || 'Customer';
  const user = await createUser(
    trx,
    { id, email: identity.email, passwordHash: null, name, role: 'user', emailVerified: identity.emailVerified, method: 'federation' },
    { ...context, actorId: id, actorType: 'user' },
    settings.mail,
  );
  return { user, existing: false };
}

/**
 * The sign-in page's buttons: each enabled provider's id and label, and the URL its post is
 * answered with a redirect to (the page's `form-action` must name its origin: Chromium holds a
 * post's redirect to it).
 */
export async function providerButtons(db: Kysely<Database>): Promise<{ id: string; label: string; authorizationEndpoint: string | undefined }[]> {
  return (await enabledProviderButtons(db)).map((provider) => ({ id: provider.id, label: provider.button_label, authorizationEndpoint: provider.authorization_endpoint ?? undefined }));
}

/** The purge job's work: attempts past their 10 minutes. */
export const purgeFederatedSignIns = (db: Kysely<Database>) => deleteStaleFederatedSignIns(db, new Date());
