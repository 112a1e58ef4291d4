import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { contextOf } from '../events/event-recorder.js';
import { forbidden } from '../http/errors.js';
import { loginBudgetKey } from '../http/client-address.js';
import { setEtag } from '../http/preconditions.js';
import { problemResponses, resourceReply } from '../http/problem-schema.js';
import { findRefreshToken } from '../sessions/refresh-token-repository.js';
import { signOut } from '../users/sign-out-service.js';
import { pairOrRefusal } from '../sessions/refresh-rotation.js';
import { TokenPairSchema } from '../sessions/session-schemas.js';
import { clientOf, hashRefreshToken } from '../sessions/token-pairs.js';
import { PUBLIC } from '../sessions/access-rule.js';
import type { TokenIssuer } from '../sessions/token-issuer.js';
import { hashPassword } from '../sessions/passwords.js';
import { logIn } from './login-service.js';
import { mfaRequired } from '../mfa/mfa-login-service.js';
import { refreshSession } from './refresh-service.js';
import { toUserResponse } from '../users/user-response.js';
import { UserSchema } from '../users/user-schemas.js';
import { createUser } from '../users/user-service.js';
import { LoginBody, RefreshTokenBody, RegisterBody } from './auth-schemas.js';

export const authRoutes: FastifyPluginAsyncTypebox<{ tokenIssuer: TokenIssuer }> = async (app, { tokenIssuer }) => {
  const { config } = app;

  app.post(
    '/register',
    {
      config: { access: PUBLIC },
      schema: {
        tags: ['auth'],
        security: [],
        operationId: 'register',
        summary: 'Create an account (role user, status active)',
        description: 'Closed with 403 `forbidden` when ALLOW_REGISTRATION=false.',
        body: RegisterBody,
        response: {
          201: resourceReply(Type.Ref(UserSchema), 'Created.', { location: true }),
          ...problemResponses(400, 403, 409, 413, 415),
        },
      },
      onRequest: async () => {
        if (!config.allowRegistration) throw forbidden('Registration is closed.');
      },
    },
    async (request, reply) => {
      // The new user is the actor of its own registration.
      const id = randomUUID();
      const { password, ...fields } = request.body;
      const passwordHash = await hashPassword(password);
      const anyone = await request.access.anyone();
      const user = await anyone.transaction((trx) => createUser(trx, { ...fields, id, passwordHash, role: 'user' }, contextOf(request, id), app.accountMail));
      setEtag(reply, user.version);
      reply.header('location', `/api/users/${user.id}`);
      return reply.code(201).send(toUserResponse(user, config.currency));
    },
  );

  app.post(
    '/login',
    {
      config: { noStore: true, access: PUBLIC },
      schema: {
        tags: ['auth'],
        security: [],
        operationId: 'login',
        summary: 'Exchange email and password for a token pair',
        description:
          'Unknown email and wrong password get the same 401 `invalid_credentials` in about the same time. ' +
          'A suspended account gets 403 `account_suspended`, only once the password was found correct. ' +
          'Rate-limited per client address (an IPv6 address by its /64) and email (LOGIN_RATE_LIMIT a minute), and per account: ' +
          'after LOGIN_ACCOUNT_FAILURE_LIMIT failed logins in an hour from any addresses, 429 until the oldest is an hour old ' +
          '(a completed password reset starts the count afresh). A login that overlaps a password change, reset, suspension ' +
          'or deletion of its user never yields a session that outlives that change: it may answer 401/403, or 200 with ' +
          'tokens that are refused from the next request on.',
        body: LoginBody,
        response: { 200: Type.Ref(TokenPairSchema), ...problemResponses(400, 401, 403, 413, 415) },
      },
      preHandler: async (request) => {
        await app.rateLimiter.spend(loginBudgetKey(request.ip, request.body.email), config.loginRateLimit);
      },
    },
    async (request) => {
      const { db } = await request.access.anyone();
      const outcome = await logIn(db, tokenIssuer, request.body, clientOf(request), config.loginAccountFailureLimit);
      if ('pair' in outcome) return outcome.pair;
      throw mfaRequired(outcome.secondStep);
    },
  );

  app.post(
    '/refresh',
    {
      config: { noStore: true, access: PUBLIC },
      schema: {
        tags: ['auth'],
        security: [],
        operationId: 'refreshTokens',
        summary: 'Rotate a refresh token into a new token pair',
        description:
          'The presented refresh token is spent; a session has one live refresh token at a time. A spent token presented ' +
          'again within REFRESH_REUSE_INTERVAL seconds of its rotation gets a fresh access token and the very refresh token ' +
          'its rotation issued (a client that refreshed twice at once keeps one refresh token); presented later, it ends the ' +
          'session (401 `invalid_token`, event `user.sessions_ended` with `cause: "refresh_reuse"`). A suspended user gets ' +
          '403 `account_suspended`. Any other `refresh_token` (unknown, expired, an access token, of whatever length within the ' +
          'body limit) is 401 `invalid_token`.',
        body: RefreshTokenBody,
        response: { 200: Type.Ref(TokenPairSchema), ...problemResponses(400, 401, 403, 413, 415) },
      },
    },
    async (request) => {
      const anyone = await request.access.anyone();
      const outcome = await anyone.transaction((trx) => refreshSession(trx, tokenIssuer, request.body.refresh_token, contextOf(request)));
      if ('refusal' in outcome && outcome.refusal === 'reused') {
        request.log.warn({ user_id: outcome.userId, session_id: outcome.sessionId }, 'a spent refresh token came back after the reuse interval: its session is ended');
      }
      return pairOrRefusal(outcome);
    },
  );

  app.post(
    '/logout',
    {
      config: { access: PUBLIC },
      schema: {
        tags: ['auth'],
        security: [],
        operationId: 'logout',
        summary: "End the refresh token's session",
        description:
          'The session ends: its refresh tokens and its access tokens stop working on the next request. Always 204, ' +
          'whether or not the token was known, so the reply reveals nothing.',
        body: RefreshTokenBody,
        response: { 204: Type.Null({ description: 'Revoked.' }), ...problemResponses(400, 413, 415) },
      },
    },
    async (request, reply) => {
      const anyone = await request.access.anyone();
      await anyone.transaction(async (trx) => {
        const token = await findRefreshToken(trx, hashRefreshToken(request.body.refresh_token));
        if (token) await signOut(trx, { userId: token.user_id, sessionId: token.family_id }, 'logout', contextOf(request, token.user_id));
      });
      return reply.code(204).send(null);
    },
  );
};
