import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { contextOf } from '../events/event-recorder.js';
import { passkeyOptionsBudgetKey, passkeySignInBudgetKey } from '../http/client-address.js';
import { problemResponses } from '../http/problem-schema.js';
import { PUBLIC } from '../sessions/access-rule.js';
import { TokenPairSchema } from '../sessions/session-schemas.js';
import type { TokenIssuer } from '../sessions/token-issuer.js';
import { clientOf } from '../sessions/token-pairs.js';
import { mfaRequired } from './mfa-login-service.js';
import { PasskeySignInBody, RequestOptionsSchema } from './mfa-schemas.js';
import type { MfaSettings } from './mfa-settings.js';
import { signInChallenge, signInWithPasskey } from './passkey-sign-in-service.js';

/** Sign-in by a discoverable passkey, no password (API.md section 19). */
export const passkeySignInRoutes: FastifyPluginAsyncTypebox<{ settings: MfaSettings; tokenIssuer: TokenIssuer }> = async (app, { settings, tokenIssuer }) => {
  const { config } = app;

  app.post(
    '/passkey/options',
    {
      config: { access: PUBLIC },
      schema: {
        tags: ['auth', 'mfa'],
        security: [],
        operationId: 'startPasskeySignIn',
        summary: 'Options to sign in with a passkey, no email or password',
        description:
          'No body and no access token. The options carry no `allowCredentials`: the browser offers the passkeys of this relying party it ' +
          'holds (those registered at POST /api/auth/mfa/webauthn are discoverable). The challenge is kept in the database, good for 5 minutes ' +
          'and for one assertion at POST /api/auth/login/passkey, good or bad. Rate-limited per client address (an IPv6 address by its /64): ' +
          'LOGIN_RATE_LIMIT requests a minute, then 429 `rate_limited` with `Retry-After`; so one address holds at most 5 × LOGIN_RATE_LIMIT ' +
          'live challenges (expired ones are purged hourly).',
        response: { 200: RequestOptionsSchema, ...problemResponses(400) },
      },
      preHandler: async (request) => {
        await app.rateLimiter.spend(passkeyOptionsBudgetKey(request.ip), config.loginRateLimit);
      },
    },
    async (request) => {
      const { db } = await request.access.anyone();
      return signInChallenge(db, settings);
    },
  );

  app.post(
    '/login/passkey',
    {
      config: { noStore: true, access: PUBLIC },
      schema: {
        tags: ['auth', 'mfa'],
        security: [],
        operationId: 'loginWithPasskey',
        summary: 'Sign in with a passkey: a new session and its token pair',
        description:
          'Send the assertion (`AuthenticationResponseJSON`) answering a challenge of POST /api/auth/passkey/options; its credential id finds the ' +
          'passkey and its user (the assertion’s `userHandle` must be present and be that user’s, as WebAuthn Level 3 §7.2 requires of a sign-in where nobody was identified first: else 400 `invalid_mfa_code`). With user verification (the UV flag) the passkey counts as two factors: 200, `amr` `["hwk","mfa"]`, ' +
          '`mfa_verified_at` set. Without it, it counts as one: a user with a TOTP factor gets 403 `mfa_required` as a password login does ' +
          '(`methods` then lists `totp` and `recovery_code` but never `webauthn`: a passkey does not complete a passkey’s sign-in, and a ' +
          '`webauthn` proof for that mfa_token is 400 `invalid_mfa_code`); POST /api/auth/login/mfa then gives `amr` `["hwk","otp","mfa"]` ' +
          '(`["hwk","mfa"]` for a recovery code); any other user gets 200 with `amr` `["hwk"]` and no verified second factor (step-up asks for ' +
          'one). An unknown or removed passkey, a bad signature, another origin, a signature counter that did not move past the stored one, ' +
          'and a challenge that is unknown, expired or used are 400 `invalid_mfa_code`; the challenge is spent either way. Only a right ' +
          'assertion of a suspended user is 403 `account_suspended`. Limits: every request counts toward LOGIN_RATE_LIMIT a minute per ' +
          'client address (an IPv6 address by its /64; no account is known before the passkey is found, so the budget is the address’s ' +
          'alone, apart from the password logins’); for a known passkey, a wrong assertion counts as a failed login toward the account’s ' +
          'LOGIN_ACCOUNT_FAILURE_LIMIT (past it 429, the right passkey included) and as a wrong second-factor code toward MFA_FAILURE_LIMIT ' +
          '(while the user’s second-factor checks are locked, 429 with `Retry-After`). An unknown credential counts toward no account. ' +
          'A sign-in that overlaps a password change, suspension or deletion of its user never yields a session that outlives that change.',
        body: PasskeySignInBody,
        response: { 200: Type.Ref(TokenPairSchema), ...problemResponses(400, 403, 413, 415) },
      },
      preHandler: async (request) => {
        await app.rateLimiter.spend(passkeySignInBudgetKey(request.ip), config.loginRateLimit);
      },
    },
    async (request) => {
      const { db } = await request.access.anyone();
      const outcome = await signInWithPasskey(
        db,
        tokenIssuer,
        settings,
        // A null userHandle (allowed by the JSON shape) is no handle: SimpleWebAuthn's type only lacks the null.
        request.body.response as AuthenticationResponseJSON,
        clientOf(request),
        { accountFailureLimit: config.loginAccountFailureLimit },
        contextOf(request),
      );
      if ('pair' in outcome) return outcome.pair;
      throw mfaRequired(outcome.secondStep);
    },
  );
};
