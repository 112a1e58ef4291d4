import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database, Role, UserRow, UserStatus } from '../db/tables.js';
import { contextOf } from '../events/event-recorder.js';
import { IdParams } from '../http/common-schemas.js';
import { forbidden, notFound } from '../http/errors.js';
import { listPage, PageQuery, PageSchema } from '../http/pagination.js';
import { IfMatchHeaders, setEtag } from '../http/preconditions.js';
import { notModifiedReply, problemResponses, resourceReply } from '../http/problem-schema.js';
import { TokenPairSchema } from '../sessions/session-schemas.js';
import { clientOf } from '../sessions/token-pairs.js';
import { changePassword } from './password-service.js';
import { countUsers, findUserById, listUsers } from './user-repository.js';
import { toUserResponse } from './user-response.js';
import {
  ChangePasswordBody,
  DeleteUserQuery,
  ListUsersQuery,
  ProfileBody,
  ProfilePatchBody,
  RoleBody,
  StatusBody,
  UserSchema,
} from './user-schemas.js';
import { changeRole, changeStatus, deleteUser, patchProfile, replaceProfile, type AdminAction } from './user-service.js';

const STAFF = ['manager', 'admin'] as const;
const ADMIN = ['admin'] as const;
const UserReply = Type.Ref(UserSchema);

export const userRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { currency } = app.config;
  /** A single user reply: its ETag and its body. */
  const userReply = (reply: FastifyReply, row: UserRow) => {
    setEtag(reply, row.version);
    return toUserResponse(row, currency);
  };

  app.get(
    '/profile',
    {
      config: { checksCallerWithData: true },
      schema: {
        operationId: 'getProfile',
        tags: ['users'],
        summary: 'The caller',
        response: { 200: resourceReply(UserReply, 'The caller.'), 304: notModifiedReply, ...problemResponses(401, 403) },
      },
    },
    async (request, reply) => {
      const user = await findUserById(request.db, request.identity.userId);
      if (!user) throw notFound('user');
      return userReply(reply, user);
    },
  );

  app.put(
    '/profile',
    {
      config: { checksCallerWithData: true },
      schema: {
        operationId: 'replaceProfile',
        tags: ['users'],
        summary: "Replace the caller's name, email and phone",
        description: 'A missing `phone` becomes null. Any other field (role, status, balance…) is a 400.',
        headers: IfMatchHeaders,
        body: ProfileBody,
        response: { 200: resourceReply(UserReply, 'The caller after the change.'), ...problemResponses(400, 401, 403, 409, 412, 413, 415) },
      },
    },
    async (request, reply) =>
      userReply(reply, await replaceProfile(request.db, request.identity.userId, request.headers['if-match'], request.body, contextOf(request), app.config)),
  );

  app.patch(
    '/profile',
    {
      config: { checksCallerWithData: true },
      schema: {
        operationId: 'patchProfile',
        tags: ['users'],
        summary: "Change some of the caller's name, email and phone (JSON merge patch)",
        description: 'Send `application/merge-patch+json` or `application/json`. `{}` changes nothing and keeps the version.',
        headers: IfMatchHeaders,
        body: ProfilePatchBody,
        response: { 200: resourceReply(UserReply, 'The caller after the change.'), ...problemResponses(400, 401, 403, 409, 412, 413, 415) },
      },
    },
    async (request, reply) =>
      userReply(reply, await patchProfile(request.db, request.identity.userId, request.headers['if-match'], request.body, contextOf(request), app.config)),
  );

  app.put(
    '/change-password',
    {
      config: { noStore: true, checksCallerWithData: true },
      schema: {
        operationId: 'changePassword',
        tags: ['users'],
        summary: "Change the caller's password",
        description:
          'Returns a new token pair; every other refresh token and every older access token of the caller stop working. ' +
          'A `new_password` equal to the current one is a 400.',
        body: ChangePasswordBody,
        response: { 200: Type.Ref(TokenPairSchema), ...problemResponses(400, 401, 403, 413, 415) },
      },
    },
    async (request) =>
      changePassword(request.db, app.tokenIssuer, request.identity.userId, {
        current: request.body.current_password,
        next: request.body.new_password,
      }, contextOf(request), clientOf(request)),
  );

  app.get(
    '',
    {
      config: { roles: STAFF, checksCallerWithData: true },
      schema: {
        operationId: 'listUsers',
        tags: ['users'],
        summary: 'List users, newest first (manager, admin)',
        description: '`q` matches a case-insensitive substring of email or name. Deleted users are never listed.',
        querystring: Type.Object({ ...PageQuery, ...ListUsersQuery.properties }, { additionalProperties: false }),
        response: { 200: PageSchema(UserReply), ...problemResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const { q, role, status, email_verified } = request.query;
      const filter = { q, role, status, email_verified };
      return listPage(request.query, {
        rows: (page) => listUsers(request.db, filter, page),
        count: () => countUsers(app.db, filter),
        toItem: (row) => toUserResponse(row, currency),
      });
    },
  );

  app.get(
    '/:id',
    {
      config: { checksCallerWithData: true },
      schema: {
        operationId: 'getUser',
        tags: ['users'],
        summary: 'One user (manager, admin, or the user itself)',
        params: IdParams,
        response: { 200: resourceReply(UserReply, 'The user.'), 304: notModifiedReply, ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const id = request.params.id;
      const user = await findUserById(request.db, id);
      // The role rule comes before the 404: a customer learns nothing of other ids.
      if (request.caller.role === 'user' && request.caller.id !== id) throw forbidden();
      if (!user) throw notFound('user');
      return userReply(reply, user);
    },
  );

  app.delete(
    '/:id',
    {
      config: { roles: ADMIN, checksCallerWithData: true },
      schema: {
        operationId: 'deleteUser',
        tags: ['users'],
        summary: 'Soft-delete a user (admin)',
        description:
          'The user is 404 from then on, gone from lists, its email free again and its sessions ended; its ledger is kept. ' +
          'Refused with 409 `last_admin` when it would leave no active admin. `reason` is recorded with the change.',
        params: IdParams,
        querystring: DeleteUserQuery,
        headers: IfMatchHeaders,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...problemResponses(400, 401, 403, 404, 409, 412) },
      },
    },
    async (request, reply) => {
      await deleteUser(request.db, {
        targetId: request.params.id,
        ifMatch: request.headers['if-match'],
        reason: request.query.reason,
        context: contextOf(request),
      });
      return reply.code(204).send(null);
    },
  );

  /** Role and status: admin-only changes of one field, under the last-admin rule. */
  const adminChange = (
    field: 'role' | 'status',
    body: typeof RoleBody | typeof StatusBody,
    texts: { operationId: string; summary: string; description: string },
    change: (db: Kysely<Database>, action: AdminAction, value: string) => Promise<UserRow>,
  ) =>
    app.put(
      `/:id/${field}`,
      {
        config: { roles: ADMIN, checksCallerWithData: true },
        schema: {
          ...texts,
          tags: ['users'],
          params: IdParams,
          headers: IfMatchHeaders,
          body,
          response: { 200: resourceReply(UserReply, 'The user after the change.'), ...problemResponses(400, 401, 403, 404, 409, 412, 413, 415) },
        },
      },
      async (request, reply) => {
        const body = request.body as Record<string, string>;
        const action = { targetId: request.params.id, ifMatch: request.headers['if-match'], reason: body.reason, context: contextOf(request) };
        return userReply(reply, await change(request.db, action, body[field]!));
      },
    );

  adminChange(
    'role',
    RoleBody,
    { operationId: 'changeRole', summary: "Change a user's role (admin)", description: 'Refused with 409 `last_admin` when it would leave no active admin.' },
    (db, action, value) => changeRole(db, action, value as Role),
  );
  adminChange(
    'status',
    StatusBody,
    {
      operationId: 'changeStatus',
      summary: 'Suspend or reactivate a user (admin)',
      description:
        "A suspension ends every session of the user: its tokens get 403 `account_suspended` while it lasts, and 401 after. " +
        'Refused with 409 `last_admin` when it would leave no active admin.',
    },
    (db, action, value) => changeStatus(db, action, value as UserStatus),
  );
};
