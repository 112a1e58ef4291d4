import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import { Value } from '@sinclair/typebox/value';
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { logInWithEmailCode } from '../auth/email-code-login-service.js';
import { logIn } from '../auth/login-service.js';
import { finishFederatedSignIn } from '../federation/federated-signin-service.js';
import type { SecretsAtRest } from '../sessions/secrets-at-rest.js';
import type { Config } from '../config.js';
import type { Database } from '../db/tables.js';
import { contextOf } from '../events/event-recorder.js';
import { loginBudgetKey, passkeyOptionsBudgetKey, passkeySignInBudgetKey } from '../http/client-address.js';
import { AppError } from '../http/errors.js';
import type { RateLimiter } from '../http/rate-limit.js';
import { completeSecondStep, loginTokenUser, type SecondStep } from '../mfa/mfa-login-service.js';
import { AuthenticationResponse } from '../mfa/mfa-schemas.js';
import type { MfaSettings } from '../mfa/mfa-settings.js';
import { passkeyChallenge } from '../mfa/passkey-challenge-service.js';
import { signInChallenge, signInWithPasskey } from '../mfa/passkey-sign-in-service.js';
import type { SecondFactorProof } from '../mfa/second-factor-check.js';
import type { LiveSigninSession } from '../sessions/signin-sessions.js';
import type { TokenIssuer } from '../sessions/token-issuer.js';
import { clientOf } from '../sessions/token-pairs.js';
import type { MailSettings } from '../users/account-emails.js';
import { emailCodeSettingsOf } from '../users/email-code-service.js';
import type { PageMessage } from './signin-pages.js';
import { newBrowserSecret } from './signin-service.js';

/** A sign-in that worked: its session, and the secret of the browser's cookie that names it. */
export interface SignedIn {
  session: Omit<LiveSigninSession, 'email'>;
  secret: string;
}
/** A sign-in refused, as the page tells it: the status, the sentence, and for a limit its Retry-After. */
export interface Refusal {
  status: number;
  error: PageMessage;
  retryAfter?: string;
}

/** The refusals a sign-in may meet, as the page tells them (never whether the email has an account). */
export function refusalOf(error: unknown): Refusal {
  if (!(error instanceof AppError)) throw error;
  switch (error.code) {
    case 'invalid_credentials':
    case 'invalid_email_code':
    // A code's account made at the moment another registration took the address: nothing was made.
    case 'email_taken':
      return { status: 400, error: { key: 'signIn.failed' } };
    case 'invalid_mfa_code':
      return { status: 400, error: { key: 'secondFactor.failed' } };
    case 'invalid_mfa_token':
      return { status: 400, error: { key: 'secondFactor.expired' } };
    case 'account_suspended':
      return { status: 403, error: { key: 'signIn.suspended' } };
    case 'rate_limited': {
      const retryAfter = error.headers?.['retry-after'] ?? '60';
      return { status: 429, error: { key: 'signIn.rateLimited', values: { seconds: Number(retryAfter) } }, retryAfter };
    }
    default:
      throw error;
  }
}

/**
 * The hosted pages' sign-ins (API.md section 18), through the very services of the API's logins
 * (auth/, mfa/), spending the same budgets under the same keys, so a wrong password on a page
 * counts exactly as one sent to POST /api/auth/login. A sign-in that works starts a sign-in
 * session: a session of section 3 that holds the hash of the browser's cookie secret and lives
 * SIGNIN_SESSION_TTL.
 */
export class SignInAttempts {
  constructor(
    private readonly settings: { config: Config; rateLimiter: RateLimiter; accountMail: MailSettings; mfaSettings: MfaSettings; tokenIssuer: TokenIssuer; secrets: SecretsAtRest },
  ) {}

  /** The options of the sign-in session a sign-in on these pages starts, beside its cookie's secret. */
  private newSigninSession() {
    const browser = newBrowserSecret();
    return { secret: browser.secret, options: { browserSecretHash: browser.hash, lifetimeSeconds: this.settings.config.signinSessionTtlSeconds } };
  }

  /**
   * A sign-in by password (`byCode` false) or email code: the address-and-email budget, then the
   * account's limits. A code comes with the hash of the browser posting it, which lets a code its
   * create-account page asked for apply that page's name and password.
   */
  async firstStep(db: Kysely<Database>, request: FastifyRequest, form: Record<string, string>, byCode: boolean, browserHash: string): Promise<SignedIn | Refusal | { secondStep: SecondStep }> {
    const { config, rateLimiter, accountMail, tokenIssuer } = this.settings;
    const email = (form.email ?? '').trim();
    const started = this.newSigninSession();
    try {
      await rateLimiter.spend(loginBudgetKey(request.ip, email), config.loginRateLimit);
      const outcome = byCode
        ? await logInWithEmailCode(
            db,
            tokenIssuer,
            { email, code: (form.code ?? '').replace(/\s/g, ''), browserHash },
            clientOf(request),
            { ...emailCodeSettingsOf(config, accountMail), accountFailureLimit: config.loginAccountFailureLimit },
            contextOf(request),
            started.options,
          )
        : await logIn(db, tokenIssuer, { email, password: form.password ?? '' }, clientOf(request), config.loginAccountFailureLimit, started.options);
      if ('secondStep' in outcome) return { secondStep: outcome.secondStep };
      return { session: outcome.session, secret: started.secret };
    } catch (error) {
      return refusalOf(error);
    }
  }

  /**
   * The request options of a passkey sign-in for the sign-in page, its challenge stored as for
   * POST /api/auth/passkey/options and from the same per-address budget; undefined past that
   * budget, and the page then offers no passkey (a password or a code still work).
   */
  async passkeyOptions(db: Kysely<Database>, request: FastifyRequest): Promise<string | undefined> {
    const { config, rateLimiter, mfaSettings } = this.settings;
    try {
      await rateLimiter.spend(passkeyOptionsBudgetKey(request.ip), config.loginRateLimit);
    } catch (error) {
      if (refusalOf(error).status === 429) return undefined;
    }
    return JSON.stringify(await signInChallenge(db, mfaSettings));
  }

  /**
   * A sign-in by a discoverable passkey (API.md section 19), `webauthn` being the JSON of the
   * assertion, as POST /api/auth/login/passkey makes it: the same budget, the same service. An
   * assertion that is not JSON, or that the service refuses, is one message on the page.
   */
  async passkey(db: Kysely<Database>, request: FastifyRequest, webauthn: string): Promise<SignedIn | Refusal | { secondStep: SecondStep }> {
    const { config, rateLimiter, mfaSettings, tokenIssuer } = this.settings;
    const started = this.newSigninSession();
    const failed: Refusal = { status: 400, error: { key: 'signIn.passkeyFailed' } };
    try {
      await rateLimiter.spend(passkeySignInBudgetKey(request.ip), config.loginRateLimit);
      const response = assertionOf(webauthn);
      if (!response) return failed;
      const outcome = await signInWithPasskey(db, tokenIssuer, mfaSettings, response, clientOf(request), { accountFailureLimit: config.loginAccountFailureLimit }, contextOf(request), started.options);
      if ('secondStep' in outcome) return { secondStep: outcome.secondStep };
      return { session: outcome.session, secret: started.secret };
    } catch (error) {
      if (error instanceof AppError && error.code === 'invalid_mfa_code') return failed;
      return refusalOf(error);
    }
  }

  /**
   * A sign-in with another identity provider, at its callback (API.md section 20): the session,
   * or the second step for a user with a second factor; every failure is one refusal, the error
   * page's, that never says whether an account exists. With the authorization request's query
   * the attempt kept, when the callback found its attempt. A "Connect" from the profile ends
   * `connected` (or refused with its own message), and signs nobody in.
   */
  async federated(
    db: Kysely<Database>,
    request: FastifyRequest,
    callback: { providerId: string; currentUrl: URL; browserHash: string },
  ): Promise<{ outcome: SignedIn | Refusal | { secondStep: SecondStep } | { connected: true }; authorizationQuery?: string }> {
    const { config, accountMail, tokenIssuer, secrets } = this.settings;
    const started = this.newSigninSession();
    const finish = await finishFederatedSignIn(
      db,
      tokenIssuer,
      { secrets, publicUrl: config.publicUrl, registrationOpen: config.allowRegistration, mail: accountMail },
      callback,
      clientOf(request),
      contextOf(request),
      started.options,
    );
    const { authorizationQuery } = finish;
    if ('refusal' in finish) return { outcome: { status: 400, error: { key: finish.connecting ? 'error.connectFailed' : 'error.federationFailed' } }, authorizationQuery };
    if ('connected' in finish) return { outcome: finish };
    if ('secondStep' in finish) return { outcome: { secondStep: finish.secondStep }, authorizationQuery };
    return { outcome: { session: finish.session, secret: started.secret }, authorizationQuery };
  }

  /**
   * The request options of a passkey as the second step of the login `mfaToken` names, as POST
   * /api/auth/mfa/webauthn/authentication-options makes them (the challenge tied to that login);
   * undefined when the login is gone or the user has no passkey, and the page then offers none.
   */
  async secondStepPasskeyOptions(db: Kysely<Database>, mfaToken: string): Promise<string | undefined> {
    const login = await loginTokenUser(db, mfaToken);
    if (!login) return undefined;
    try {
      return JSON.stringify(await passkeyChallenge(db, this.settings.mfaSettings, login.userId, { loginTokenId: login.tokenId }));
    } catch (error) {
      if (error instanceof AppError && error.code === 'not_found') return undefined;
      throw error;
    }
  }

  /** The second step (API.md section 12) with the mfa_token the first step left in the browser, counted as POST /api/auth/login/mfa counts it. */
  async secondStep(db: Kysely<Database>, request: FastifyRequest, mfaToken: string | undefined, proof: SecondFactorProof): Promise<SignedIn | Refusal> {
    const { config, rateLimiter, mfaSettings, tokenIssuer } = this.settings;
    const login = mfaToken ? await loginTokenUser(db, mfaToken) : undefined;
    if (!login) return { status: 400, error: { key: 'secondFactor.expired' } };
    const started = this.newSigninSession();
    try {
      await rateLimiter.spend(loginBudgetKey(request.ip, login.email), config.loginRateLimit);
      const { session } = await completeSecondStep(
        db,
        tokenIssuer,
        mfaSettings,
        { ...login, proof },
        clientOf(request),
        { accountFailureLimit: config.loginAccountFailureLimit },
        contextOf(request, login.userId),
        started.options,
      );
      return { session, secret: started.secret };
    } catch (error) {
      return refusalOf(error);
    }
  }
}

/**
 * The assertion of the `webauthn` field, when it is JSON of the shape POST
 * /api/auth/login/passkey accepts (its very schema); the service checks everything else.
 */
export function assertionOf(webauthn: string): AuthenticationResponseJSON | undefined {
  try {
    const parsed: unknown = JSON.parse(webauthn);
    return Value.Check(AuthenticationResponse, parsed) ? (parsed as AuthenticationResponseJSON) : undefined;
  } catch {
    return undefined;
  }
}
