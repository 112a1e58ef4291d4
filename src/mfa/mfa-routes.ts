import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { contextOf } from '../events/event-recorder.js';
import { addressKey } from '../http/client-address.js';
import { IdParams } from '../http/common-schemas.js';
import { AppError, notFound } from '../http/errors.js';
import { problemResponses, resourceReply } from '../http/problem-schema.js';
import { ANY_ROLE, type AccessRule } from '../sessions/access-rule.js';
import type { Caller } from '../sessions/admission.js';
import { userById } from '../users/user-repository.js';
import { confirmedFactorsOfUser, factorOfUser } from './factor-repository.js';
import { confirmTotp, regenerateRecoveryCodes, registerPasskey, removeFactor, startPasskeyRegistration, startTotpEnrolment, type FactorOwner } from './factor-service.js';
import { loginTokenUser, invalidMfaToken } from './mfa-login-service.js';
import { toConfirmedFactorResponse, toFactorResponse } from './mfa-response.js';
import {
  AuthenticationOptionsBody,
  ConfirmedFactorSchema,
  ConfirmTotpBody,
  CreationOptionsSchema,
  MfaFactorSchema,
  MfaStatusSchema,
  NewPasskeyBody,
  NewTotpBody,
  NewTotpSchema,
  RecoveryCodesSchema,
  RequestOptionsSchema,
  VerifiedSchema,
  VerifyBody,
} from './mfa-schemas.js';
import type { MfaSettings } from './mfa-settings.js';
import { passkeyChallenge } from './passkey-challenge-service.js';
import { invalidMfaCode } from './second-factor-check.js';
import { verifyStepUp } from './step-up-service.js';

/** The caller's own factors: any user, users only, open to a user who must enrol before anything else. */
const OWN_FACTORS: AccessRule = { roles: ANY_ROLE, duringEnrolment: true, directSignInOnly: true };
/**
 * Adding a factor, removing one and new recovery codes need a fresh second factor from a user who
 * has one (API.md section 17): else a stolen session could add its own factor and, verified by
 * it, take the account's factors over. A user without a factor enrols without step-up.
 */
const OWN_FACTORS_STEPPED_UP: AccessRule = { ...OWN_FACTORS, stepUp: true };

/** The admitted caller, as the owner of the factors it changes, in the session it acts in. */
const ownerOf = (caller: Caller): FactorOwner => ({ userId: caller.id, sessionId: caller.sessionId! });

/** API.md section 12: a user's second factors: TOTP, passkeys, recovery codes, and step-up. */
export const mfaRoutes: FastifyPluginAsyncTypebox<{ settings: MfaSettings }> = async (app, { settings }) => {
  const { config } = app;

  app.get(
    '',
    {
      config: { access: OWN_FACTORS },
      schema: {
        operationId: 'getMyMfa',
        tags: ['mfa'],
        summary: "The caller's second factors",
        response: { 200: MfaStatusSchema, ...problemResponses(401, 403) },
      },
    },
    async (request) => {
      const { access } = request;
      const factors = await access.read(confirmedFactorsOfUser, access.ownUserId);
      const { caller } = await access.admit();
      return {
        enabled: factors.length > 0,
        required: settings.requiredRoles.includes(caller.role!),
        factors: factors.map(toFactorResponse),
        recovery_codes_left: factors[0]?.recovery_codes_left ?? 0,
      };
    },
  );

  app.post(
    '/totp',
    {
      config: { access: OWN_FACTORS_STEPPED_UP, noStore: true },
      schema: {
        operationId: 'startTotp',
        tags: ['mfa'],
        summary: 'Add an authenticator app (TOTP); it works once confirmed',
        description:
          'The reply carries the secret (base32 of 20 random bytes) and the `otpauth://` URL to show as a QR code; the factor ' +
          'counts once POST /api/auth/mfa/totp/{id}/confirm took a code of it. Unconfirmed factors are dropped after a day. ' +
          'A user has at most 20 factors, unconfirmed ones included (409 `too_many_factors` beyond).',
        body: NewTotpBody,
        response: { 201: resourceReply(NewTotpSchema, 'Started; works once confirmed.', { location: true, etag: false }), ...problemResponses(400, 401, 403, 409, 413, 415) },
      },
    },
    async (request, reply) => {
      const { access } = request;
      const started = await access.transaction((trx, caller) => startTotpEnrolment(trx, settings, ownerOf(caller), request.body.name));
      reply.header('location', `/api/auth/mfa/factors/${started.factor.id}`);
      return reply.code(201).send({ id: started.factor.id, type: 'totp', name: started.factor.name, secret: started.secret, otpauth_url: started.otpauthUrl });
    },
  );

  app.post(
    '/totp/:id/confirm',
    {
      config: { access: OWN_FACTORS_STEPPED_UP, noStore: true },
      schema: {
        operationId: 'confirmTotp',
        tags: ['mfa'],
        summary: 'Confirm an authenticator app with a code it shows',
        description:
          "The code (current step, or one either side) is spent. The user's first factor counts as the session's second factor verified now " +
          "and brings `recovery_codes`, shown this once; confirming a later factor leaves `mfa_verified_at` as it was. 404 for a factor that is not the caller's unconfirmed TOTP factor.",
        params: IdParams,
        body: ConfirmTotpBody,
        response: { 200: ConfirmedFactorSchema, ...problemResponses(400, 401, 403, 404, 413, 415) },
      },
    },
    async (request) => {
      const { access } = request;
      const code = request.body.code.replace(/\s/g, '');
      const confirmed = await access.transaction((trx, caller) => confirmTotp(trx, settings, ownerOf(caller), request.params.id, code, contextOf(request)));
      return toConfirmedFactorResponse(confirmed.factor, confirmed.recoveryCodes);
    },
  );

  app.post(
    '/webauthn/registration-options',
    {
      config: { access: OWN_FACTORS_STEPPED_UP },
      schema: {
        operationId: 'startPasskeyRegistration',
        tags: ['mfa'],
        summary: 'Options to create a passkey',
        description:
          'Attestation `none`, user verification preferred, the caller’s passkeys excluded. The challenge is good for 5 minutes, once, in this session. No body. ' +
          'A user has at most 20 factors (409 `too_many_factors` beyond).',
        response: { 200: CreationOptionsSchema, ...problemResponses(400, 401, 403, 409) },
      },
    },
    async (request) => {
      const { access } = request;
      return access.transaction((trx, caller) => startPasskeyRegistration(trx, settings, ownerOf(caller)));
    },
  );

  app.post(
    '/webauthn',
    {
      config: { access: OWN_FACTORS_STEPPED_UP, noStore: true },
      schema: {
        operationId: 'registerPasskey',
        tags: ['mfa'],
        summary: 'Register a passkey',
        description:
          'The response must answer a challenge of this session’s registration options, which it spends whether or not it verifies ' +
          "(400 `invalid_mfa_code`, also for a passkey registered already). The user's first factor counts as the session's second factor " +
          "verified now and brings `recovery_codes`, shown this once; a later one leaves `mfa_verified_at` as it was.",
        body: NewPasskeyBody,
        response: { 201: resourceReply(ConfirmedFactorSchema, 'Registered.', { location: true, etag: false }), ...problemResponses(400, 401, 403, 409, 413, 415) },
      },
    },
    async (request, reply) => {
      const { access } = request;
      const registered = await access.transaction((trx, caller) => registerPasskey(trx, settings, ownerOf(caller), request.body.name, request.body.response as never, contextOf(request)));
      if (!registered) throw invalidMfaCode();
      reply.header('location', `/api/auth/mfa/factors/${registered.factor.id}`);
      return reply.code(201).send(toConfirmedFactorResponse(registered.factor, registered.recoveryCodes));
    },
  );

  app.get(
    '/factors/:id',
    {
      config: { access: OWN_FACTORS },
      schema: {
        operationId: 'getMyFactor',
        tags: ['mfa'],
        summary: 'One of the caller’s factors (an unconfirmed one too: the Location of its creation)',
        description: 'Never a secret. Another user’s factor is 404.',
        params: IdParams,
        response: { 200: Type.Ref(MfaFactorSchema), ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const [factor] = await request.access.read(factorOfUser, request.access.ownUserId, request.params.id.toLowerCase());
      if (!factor) throw notFound('factor');
      return toFactorResponse(factor);
    },
  );

  app.delete(
    '/factors/:id',
    {
      config: { access: OWN_FACTORS_STEPPED_UP },
      schema: {
        operationId: 'removeMyFactor',
        tags: ['mfa'],
        summary: 'Remove one of the caller’s factors',
        description:
          'With the last factor go the recovery codes; the last factor of a user whose role requires one stays (409 `last_factor`). ' +
          'Removing a confirmed factor ends the user’s other sessions, and any login waiting for its second step; the session making ' +
          'the request stays. Another user’s factor is 404.',
        params: IdParams,
        response: { 204: Type.Null({ description: 'Removed.' }), ...problemResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      const { access } = request;
      await access.transaction((trx, caller) => removeFactor(trx, settings, ownerOf(caller), request.params.id, contextOf(request)));
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/recovery-codes',
    {
      config: { access: OWN_FACTORS_STEPPED_UP, noStore: true },
      schema: {
        operationId: 'newRecoveryCodes',
        tags: ['mfa'],
        summary: 'A new set of 10 recovery codes; the old set is void',
        description: 'Shown this once. 404 for a user without a second factor (recovery codes come with the first). No body.',
        response: { 200: RecoveryCodesSchema, ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { access } = request;
      return { recovery_codes: await access.transaction((trx, caller) => regenerateRecoveryCodes(trx, ownerOf(caller), contextOf(request))) };
    },
  );

  app.post(
    '/webauthn/authentication-options',
    {
      config: { access: { ...OWN_FACTORS, tokenOptional: true }, optionalBody: true },
      schema: {
        operationId: 'startPasskeyAssertion',
        tags: ['mfa'],
        summary: 'Options to prove a passkey: at login (with the mfa_token) or for step-up (with an access token)',
        description:
          'The challenge is good for 5 minutes, tied to that `mfa_token` or to the session of the access token, and spent by the ' +
          'first assertion that uses it, good or bad. 401 `invalid_mfa_token` for an `mfa_token` that is not live; 401 ' +
          '`unauthenticated` with neither an `mfa_token` nor an access token; 404 for a user without a passkey.',
        body: AuthenticationOptionsBody,
        response: { 200: RequestOptionsSchema, ...problemResponses(400, 401, 403, 404, 413, 415) },
      },
    },
    async (request) => {
      const { access } = request;
      // An access token sent is checked whatever the body says: anyone() admits its caller first.
      const { caller, db } = await access.anyone();
      const mfaToken = request.body.mfa_token;
      if (mfaToken !== undefined) {
        const login = await loginTokenUser(db, mfaToken);
        if (!login) throw invalidMfaToken();
        return passkeyChallenge(db, settings, login.userId, { loginTokenId: login.tokenId });
      }
      if (!caller) throw new AppError('unauthenticated', 'Send the mfa_token of a login, or an access token for step-up.', undefined, { 'www-authenticate': 'Bearer' });
      return passkeyChallenge(db, settings, caller.id, { sessionId: caller.sessionId! });
    },
  );

  app.post(
    '/verify',
    {
      config: { access: OWN_FACTORS },
      schema: {
        operationId: 'verifySecondFactor',
        tags: ['mfa'],
        summary: 'Step-up: verify the second factor in this session',
        description:
          'The session making the request counts as having verified its second factor now, for MFA_STEP_UP_MAX_AGE seconds; no other ' +
          'session is touched. A passkey’s assertion must answer a challenge of this session. Rate-limited like logins (per address and ' +
          'account under LOGIN_RATE_LIMIT), and wrong codes count toward LOGIN_ACCOUNT_FAILURE_LIMIT. MFA_FAILURE_LIMIT (10) wrong codes ' +
          'in a row of the user, here and at logins, lock its second-factor checks: every check after them, the right code included, is 429 ' +
          '`rate_limited` with `Retry-After` for 15 minutes, doubling with each further lock up to 24 hours (a lock a day or more after the last one ended is a first one again); the user gets an email at each lock.',
        body: VerifyBody,
        response: { 200: VerifiedSchema, ...problemResponses(400, 401, 403, 413, 415) },
      },
    },
    async (request) => {
      const { access } = request;
      const [user] = await access.read(userById, access.ownUserId);
      if (!user) throw notFound('user');
      const { caller, db } = await access.admit();
      await app.rateLimiter.spend(`login:${addressKey(request.ip)}:${user.email.toLowerCase()}`, config.loginRateLimit);
      const proof = 'code' in request.body ? { code: request.body.code.replace(/\s/g, '') } : request.body;
      const verifiedAt = await verifyStepUp(db, settings, { ...ownerOf(caller), email: user.email }, proof as never, { accountFailureLimit: config.loginAccountFailureLimit }, contextOf(request));
      return { verified_at: verifiedAt.toISOString() };
    },
  );
};

