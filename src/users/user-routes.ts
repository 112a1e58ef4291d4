import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { TokenPairSchema } from '../auth/auth-schemas.js';
import { changePassword } from '../auth/password-change.js';
import { IdParams } from '../http/common-schemas.js';
import { IfMatchHeaders, setEtag } from '../http/etag.js';
import { forbidden, notFound } from '../http/errors.js';
import { PageQuery, PageSchema, pageRequest, toPage } from '../http/pagination.js';
import { problemResponses } from '../http/problem-schema.js';
import { countUsers, findUserById, listUsers } from './user-repository.js';
import { toUserResponse } from './user-response.js';
import {
  ChangePasswordBody,
  ListUsersQuery,
  ProfileBody,
  RoleBody,
  StatusBody,
  UserSchema,
} from './user-schemas.js';
import { changeRole, changeStatus, deleteUser, replaceProfile } from './user-service.js';

const STAFF = ['manager', 'admin'] as const;
const ADMIN = ['admin'] as const;
const UserReply = Type.Ref(UserSchema);

export const userRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { currency } = app.config;

  app.get(
    '/profile',
    {
      schema: {
        tags: ['users'],
        summary: 'The caller',
        response: { 200: UserReply, ...problemResponses(401, 403) },
      },
    },
    async (request, reply) => {
      const user = await findUserById(app.db, request.caller.id);
      if (!user) throw notFound('user');
      setEtag(reply, user.version);
      return toUserResponse(user, currency);
    },
  );

  app.put(
    '/profile',
    {
      schema: {
        tags: ['users'],
        summary: "Replace the caller's name, email and phone",
        description: 'A missing `phone` becomes null. Any other field (role, status, balance…) is a 400.',
        headers: IfMatchHeaders,
        body: ProfileBody,
        response: { 200: UserReply, ...problemResponses(400, 401, 403, 409, 412, 413, 415) },
      },
    },
    async (request, reply) => {
      const user = await replaceProfile(app.db, request.caller.id, request.headers['if-match'], request.body);
      setEtag(reply, user.version);
      return toUserResponse(user, currency);
    },
  );

  app.put(
    '/change-password',
    {
      schema: {
        tags: ['users'],
        summary: "Change the caller's password",
        description:
          'Returns a new token pair; every other refresh token and every older access token of the caller stop working.',
        body: ChangePasswordBody,
        response: { 200: Type.Ref(TokenPairSchema), ...problemResponses(400, 401, 403, 413, 415) },
      },
    },
    async (request) =>
      changePassword(app, app.db, request.caller.id, request.body.current_password, request.body.new_password),
  );

  app.get(
    '',
    {
      config: { roles: STAFF },
      schema: {
        tags: ['users'],
        summary: 'List users, newest first (manager, admin)',
        description: '`q` matches a case-insensitive substring of email or name. Deleted users are never listed.',
        querystring: Type.Object({ ...PageQuery, ...ListUsersQuery.properties }, { additionalProperties: false }),
        response: { 200: PageSchema(UserReply), ...problemResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const { q, role, status, include_total } = request.query;
      const filter = { q, role, status };
      const page = pageRequest(request.query);
      const rows = await listUsers(app.db, filter, page);
      const body = toPage(rows, page.limit, (row) => toUserResponse(row, currency));
      return include_total ? { ...body, total: await countUsers(app.db, filter) } : body;
    },
  );

  app.get(
    '/:id',
    {
      schema: {
        tags: ['users'],
        summary: 'One user (manager, admin, or the user itself)',
        params: IdParams,
        response: { 200: UserReply, ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const id = request.params.id.toLowerCase();
      if (request.caller.role === 'user' && request.caller.id !== id) throw forbidden();
      const user = await findUserById(app.db, id);
      if (!user) throw notFound('user');
      setEtag(reply, user.version);
      return toUserResponse(user, currency);
    },
  );

  app.delete(
    '/:id',
    {
      config: { roles: ADMIN },
      schema: {
        tags: ['users'],
        summary: 'Soft-delete a user (admin)',
        description:
          'The user is 404 from then on, gone from lists, its email free again and its tokens 401; its ledger is kept. ' +
          'Refused with 409 `last_admin` when it would leave no active admin.',
        params: IdParams,
        headers: IfMatchHeaders,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...problemResponses(400, 401, 403, 404, 409, 412) },
      },
    },
    async (request, reply) => {
      await deleteUser(app.db, request.params.id.toLowerCase(), request.headers['if-match']);
      return reply.code(204).send(null);
    },
  );

  app.put(
    '/:id/role',
    {
      config: { roles: ADMIN },
      schema: {
        tags: ['users'],
        summary: "Change a user's role (admin)",
        description: 'Refused with 409 `last_admin` when it would leave no active admin.',
        params: IdParams,
        headers: IfMatchHeaders,
        body: RoleBody,
        response: { 200: UserReply, ...problemResponses(400, 401, 403, 404, 409, 412, 413, 415) },
      },
    },
    async (request, reply) => {
      const user = await changeRole(app.db, request.params.id.toLowerCase(), request.headers['if-match'], request.body.role);
      setEtag(reply, user.version);
      return toUserResponse(user, currency);
    },
  );

  app.put(
    '/:id/status',
    {
      config: { roles: ADMIN },
      schema: {
        tags: ['users'],
        summary: "Suspend or reactivate a user (admin)",
        description:
          "A suspended user's tokens and logins get 403 `account_suspended`. Refused with 409 `last_admin` " +
          'when it would leave no active admin.',
        params: IdParams,
        headers: IfMatchHeaders,
        body: StatusBody,
        response: { 200: UserReply, ...problemResponses(400, 401, 403, 404, 409, 412, 413, 415) },
      },
    },
    async (request, reply) => {
      const user = await changeStatus(
        app.db,
        request.params.id.toLowerCase(),
        request.headers['if-match'],
        request.body.status,
      );
      setEtag(reply, user.version);
      return toUserResponse(user, currency);
    },
  );
};
