import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { contextOf } from '../events/event-recorder.js';
import { addressKey } from '../http/client-address.js';
import { problemResponses } from '../http/problem-schema.js';
import { PUBLIC } from '../sessions/access-rule.js';
import type { TokenIssuer } from '../sessions/token-issuer.js';
import { TokenPairSchema } from '../sessions/session-schemas.js';
import { clientOf } from '../sessions/token-pairs.js';
import { completeSecondStep, invalidMfaToken, loginTokenUser } from './mfa-login-service.js';
import { LoginSecondStepBody } from './mfa-schemas.js';
import type { MfaSettings } from './mfa-settings.js';
import type { SecondFactorProof } from './second-factor-check.js';

/** The second step of a login whose user has a second factor (API.md section 12). */
export const mfaLoginRoutes: FastifyPluginAsyncTypebox<{ settings: MfaSettings; tokenIssuer: TokenIssuer }> = async (app, { settings, tokenIssuer }) => {
  const { config } = app;
  app.post(
    '/login/mfa',
    {
      config: { noStore: true, access: PUBLIC },
      schema: {
        tags: ['auth', 'mfa'],
        security: [],
        operationId: 'loginSecondStep',
        summary: 'Finish a login with a second factor: a new session and its token pair',
        description:
          'Send the `mfa_token` of the login’s 403 `mfa_required` reply with a TOTP `code`, a `recovery_code`, or a passkey’s `webauthn` ' +
          'assertion (answering a challenge of POST /api/auth/mfa/webauthn/authentication-options for this mfa_token). A wrong one is 400 ' +
          '`invalid_mfa_code`; the 5th wrong one kills the mfa_token (401 `invalid_mfa_token`, as for an unknown, expired or spent one). ' +
          'Rate-limited like logins, per address and account (LOGIN_RATE_LIMIT), and wrong codes count toward LOGIN_ACCOUNT_FAILURE_LIMIT. ' +
          'MFA_FAILURE_LIMIT (10) wrong second-factor codes in a row of one user, at logins and step-ups from any address, lock its ' +
          'second-factor checks: they are answered 400 `invalid_mfa_code` as usual, and every check after them, the right code included, ' +
          'is 429 `rate_limited` with `Retry-After` for 15 minutes, doubling with each further lock up to 24 hours (the user gets an email ' +
          'at each lock; a right code before the lock starts the count afresh; a lock a day or more after the last one ended is a first one again). The password step of POST /api/auth/login stays open meanwhile. ' +
          'A password change, reset, suspension, deletion, factor removal or factor reset since the login voids the mfa_token. ' +
          'The access token carries `amr` (`["pwd","otp","mfa"]`, `["pwd","hwk","mfa"]`, or `["pwd","mfa"]` for a recovery code) and `auth_time`. ' +
          'After a sign-in by passkey without user verification (POST /api/auth/login/passkey) the first value is `hwk` instead of `pwd` ' +
          '(`["hwk","otp","mfa"]`, `["hwk","mfa"]`), and a `webauthn` proof is 400 `invalid_mfa_code`: a passkey does not complete a passkey’s sign-in.',
        body: LoginSecondStepBody,
        response: { 200: Type.Ref(TokenPairSchema), ...problemResponses(400, 401, 403, 413, 415) },
      },
    },
    async (request) => {
      const { mfa_token: mfaToken, ...rest } = request.body;
      const { db } = await request.access.anyone();
      const login = await loginTokenUser(db, mfaToken);
      if (!login) throw invalidMfaToken();
      await app.rateLimiter.spend(`login:${addressKey(request.ip)}:${login.email.toLowerCase()}`, config.loginRateLimit);
      const proof = ('code' in rest ? { code: rest.code.replace(/\s/g, '') } : rest) as SecondFactorProof;
      const { pair } = await completeSecondStep(
        db,
        tokenIssuer,
        settings,
        { ...login, proof },
        clientOf(request),
        { accountFailureLimit: config.loginAccountFailureLimit },
        contextOf(request, login.userId),
      );
      return pair;
    },
  );
};
