import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { isUniqueViolation } from '../db/errors.js';
import { setEtag } from '../http/etag.js';
import { AppError, accountSuspended, forbidden } from '../http/errors.js';
import { problemResponses } from '../http/problem-schema.js';
import { findUserByEmail, insertUser } from '../users/user-repository.js';
import { toUserResponse } from '../users/user-response.js';
import { UserSchema } from '../users/user-schemas.js';
import { emailTaken } from '../users/user-service.js';
import { LoginBody, RefreshTokenBody, RegisterBody, TokenPairSchema } from './auth-schemas.js';
import { hashPassword, verifyPassword } from './passwords.js';
import { revokeRefreshTokenByHash } from './refresh-token-repository.js';
import { rotateRefreshToken } from './refresh.js';
import { hashRefreshToken, issueTokenPair } from './token-pairs.js';

const invalidCredentials = () => new AppError(401, 'invalid_credentials', 'The email or password is wrong.');

export const authRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { config } = app;

  app.post(
    '/register',
    {
      schema: {
        tags: ['auth'],
        security: [],
        summary: 'Create an account (role user, status active)',
        description: 'Closed with 403 `forbidden` when ALLOW_REGISTRATION=false.',
        body: RegisterBody,
        response: {
          201: Type.Ref(UserSchema, { description: 'Created; with Location and ETag.' }),
          ...problemResponses(400, 403, 409, 413, 415),
        },
      },
      onRequest: async () => {
        if (!config.allowRegistration) throw forbidden('Registration is closed.');
      },
    },
    async (request, reply) => {
      const { email, password, name, phone } = request.body;
      const passwordHash = await hashPassword(password);
      const now = new Date();
      try {
        const user = await insertUser(app.db, {
          id: randomUUID(),
          email,
          name,
          phone: phone ?? null,
          role: 'user',
          status: 'active',
          password_hash: passwordHash,
          created_at: now,
          updated_at: now,
        });
        setEtag(reply, user.version);
        reply.header('location', `/api/users/${user.id}`);
        return reply.code(201).send(toUserResponse(user, config.currency));
      } catch (error) {
        if (isUniqueViolation(error, 'users_email_unique')) throw emailTaken();
        throw error;
      }
    },
  );

  app.post(
    '/login',
    {
      schema: {
        tags: ['auth'],
        security: [],
        summary: 'Exchange email and password for a token pair',
        description:
          'Unknown email and wrong password get the same 401 `invalid_credentials` in about the same time. ' +
          'A suspended account gets 403 `account_suspended`, only once the password was found correct. ' +
          'Rate-limited per client address and email (LOGIN_RATE_LIMIT a minute).',
        body: LoginBody,
        response: { 200: Type.Ref(TokenPairSchema), ...problemResponses(400, 401, 403, 413, 415) },
      },
      config: {
        rateLimit: {
          max: config.loginRateLimit,
          timeWindow: 60_000,
          hook: 'preHandler',
          keyGenerator: (request) => {
            const email = (request.body as { email?: unknown } | undefined)?.email;
            return `login:${request.ip}:${typeof email === 'string' ? email.toLowerCase() : ''}`;
          },
        },
      },
    },
    async (request) => {
      const user = await findUserByEmail(app.db, request.body.email);
      const passwordMatches = await verifyPassword(user?.password_hash, request.body.password);
      if (!user || !passwordMatches) throw invalidCredentials();
      if (user.status === 'suspended') throw accountSuspended();
      return issueTokenPair(app, app.db, user);
    },
  );

  app.post(
    '/refresh',
    {
      schema: {
        tags: ['auth'],
        security: [],
        summary: 'Rotate a refresh token into a new token pair',
        description:
          'The presented refresh token is spent. Presenting a spent one again revokes its whole family ' +
          '(401 `invalid_token`). A suspended user gets 403 `account_suspended`.',
        body: RefreshTokenBody,
        response: { 200: Type.Ref(TokenPairSchema), ...problemResponses(400, 401, 403, 413, 415) },
      },
    },
    async (request) => rotateRefreshToken(app, app.db, request.body.refresh_token),
  );

  app.post(
    '/logout',
    {
      schema: {
        tags: ['auth'],
        security: [],
        summary: 'Revoke a refresh token',
        description: 'Always 204, whether or not the token was known, so the reply reveals nothing.',
        body: RefreshTokenBody,
        response: { 204: Type.Null({ description: 'Revoked.' }), ...problemResponses(400, 413, 415) },
      },
    },
    async (request, reply) => {
      await revokeRefreshTokenByHash(app.db, hashRefreshToken(request.body.refresh_token));
      return reply.code(204).send(null);
    },
  );
};
