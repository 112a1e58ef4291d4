import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { contextOf } from '../events/event-recorder.js';
import { AppError, accountSuspended, forbidden } from '../http/errors.js';
import { setEtag } from '../http/preconditions.js';
import { problemResponses, resourceReply } from '../http/problem-schema.js';
import { verifyPassword } from '../sessions/passwords.js';
import { findRefreshToken } from '../sessions/refresh-token-repository.js';
import { signOut } from '../sessions/session-service.js';
import { rotateRefreshToken } from '../sessions/refresh-rotation.js';
import { TokenPairSchema } from '../sessions/session-schemas.js';
import { clientOf, hashRefreshToken, startSession } from '../sessions/token-pairs.js';
import { findUserByEmail } from '../users/user-repository.js';
import { toUserResponse } from '../users/user-response.js';
import { UserSchema } from '../users/user-schemas.js';
import { createUser } from '../users/user-service.js';
import { LoginBody, RefreshTokenBody, RegisterBody } from './auth-schemas.js';

const invalidCredentials = () => new AppError('invalid_credentials', 'The email or password is wrong.');

export const authRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { config } = app;

  app.post(
    '/register',
    {
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
      const user = await createUser(app.db, { ...request.body, id, role: 'user' }, contextOf(request, id), config);
      setEtag(reply, user.version);
      reply.header('location', `/api/users/${user.id}`);
      return reply.code(201).send(toUserResponse(user, config.currency));
    },
  );

  app.post(
    '/login',
    {
      config: { noStore: true },
      schema: {
        tags: ['auth'],
        security: [],
        operationId: 'login',
        summary: 'Exchange email and password for a token pair',
        description:
          'Unknown email and wrong password get the same 401 `invalid_credentials` in about the same time. ' +
          'A suspended account gets 403 `account_suspended`, only once the password was found correct. ' +
          'Rate-limited per client address and email (LOGIN_RATE_LIMIT a minute).',
        body: LoginBody,
        response: { 200: Type.Ref(TokenPairSchema), ...problemResponses(400, 401, 403, 413, 415) },
      },
      preHandler: async (request) => {
        const email = request.body.email.toLowerCase();
        await app.rateLimiter.spend(`login:${request.ip}:${email}`, config.loginRateLimit);
      },
    },
    async (request) => {
      const user = await findUserByEmail(app.db, request.body.email);
      const passwordMatches = await verifyPassword(user?.password_hash, request.body.password);
      if (!user || !passwordMatches) throw invalidCredentials();
      if (user.status === 'suspended') throw accountSuspended();
      return startSession(app.db, app.tokenIssuer, user.id, clientOf(request));
    },
  );

  app.post(
    '/refresh',
    {
      config: { noStore: true },
      schema: {
        tags: ['auth'],
        security: [],
        operationId: 'refreshTokens',
        summary: 'Rotate a refresh token into a new token pair',
        description:
          'The presented refresh token is spent. Presenting a spent one again revokes its whole family ' +
          '(401 `invalid_token`). A suspended user gets 403 `account_suspended`.',
        body: RefreshTokenBody,
        response: { 200: Type.Ref(TokenPairSchema), ...problemResponses(400, 401, 403, 413, 415) },
      },
    },
    async (request) => rotateRefreshToken(app.db, app.tokenIssuer, request.body.refresh_token),
  );

  app.post(
    '/logout',
    {
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
      const token = await findRefreshToken(app.db, hashRefreshToken(request.body.refresh_token));
      if (token) await signOut(app.db, { userId: token.user_id, sessionId: token.family_id }, 'logout', contextOf(request, token.user_id));
      return reply.code(204).send(null);
    },
  );
};
