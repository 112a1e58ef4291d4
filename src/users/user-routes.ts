import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely, Transaction } from 'kysely';
import type { Database, Role, UserRow, UserStatus } from '../db/tables.js';
import { contextOf } from '../events/event-recorder.js';
import { loginBudgetKey } from '../http/client-address.js';
import { IdParams } from '../http/common-schemas.js';
import { notFound } from '../http/errors.js';
import { listPage, PageQuery, PageSchema } from '../http/pagination.js';
import { IfMatchHeaders, setEtag } from '../http/preconditions.js';
import { notModifiedReply, problemResponses, resourceReply } from '../http/problem-schema.js';
import { ADMIN, ANY_ROLE, STAFF } from '../sessions/access-rule.js';
import type { Access } from '../sessions/admission.js';
import { TokenPairSchema } from '../sessions/session-schemas.js';
import type { TokenIssuer } from '../sessions/token-issuer.js';
import { clientOf } from '../sessions/token-pairs.js';
import { applyPasswordChange, preparePasswordChange } from './password-service.js';
import { countUsers, userById, usersPage } from './user-repository.js';
import { toUserResponse } from './user-response.js';
import {
  ChangePasswordBody,
  DeleteProfileBody,
  DeleteUserQuery,
  ListUsersQuery,
  ProfileBody,
  ProfilePatchBody,
  RoleBody,
  StatusBody,
  UserSchema,
} from './user-schemas.js';
import {
  applyProfileChange,
  changeRole,
  changeStatus,
  checkPatch,
  checkReplacement,
  deleteOwnAccount,
  deleteUser,
  proofNeeded,
  reauthenticate,
  type AdminAction,
} from './user-service.js';

const UserReply = Type.Ref(UserSchema);
/** The caller's own account: any user, never an API client. */
const OWN_ACCOUNT = { roles: ANY_ROLE } as const;

/** The caller's own user row, read beside its admission, and the database that admission gives. */
async function ownUser(access: Access): Promise<{ user: UserRow; db: Kysely<Database> }> {
  const [user] = await access.read(userById, access.ownUserId);
  if (!user) throw notFound('user');
  // The read admitted the caller: this reuses its decision and sends no statement.
  const { db } = await access.admit();
  return { user, db };
}

/** What each route that checks the caller's own password says about it (API.md section 17). */
const REAUTHENTICATION =
  'The password counts like a login: per client address and account under LOGIN_RATE_LIMIT, and a wrong one toward ' +
  'LOGIN_ACCOUNT_FAILURE_LIMIT; past either limit 429 `rate_limited` with Retry-After, the right password included, and nothing changes. ' +
  'An account without a password (`has_password` false) sends `email_code` instead, a code it asked for at POST /api/auth/email-code for its ' +
  'own email (only such an account may: a password sent by it, or a code sent by an account with a password, is a 400 naming the field); ' +
  'a wrong code is 400 `invalid_email_code` and counts as a wrong password, and the change spends the right one.';

export const userRoutes: FastifyPluginAsyncTypebox<{ tokenIssuer: TokenIssuer }> = async (app, { tokenIssuer }) => {
  const { currency, loginRateLimit, loginAccountFailureLimit } = app.config;
  /** A single user reply: its ETag and its body. */
  const userReply = (reply: FastifyReply, row: UserRow) => {
    setEtag(reply, row.version);
    return toUserResponse(row, currency);
  };
  /** A check of the caller's password spends from the login budget of the address and the account's email, as a login does. */
  const spendLoginBudget = (request: FastifyRequest, user: UserRow) => app.rateLimiter.spend(loginBudgetKey(request.ip, user.email), loginRateLimit);

  app.get(
    '/profile',
    {
      // Open to a user who must add a second factor first: the console needs to know who it is.
      config: { access: { ...OWN_ACCOUNT, duringEnrolment: true, account: true } },
      schema: {
        operationId: 'getProfile',
        tags: ['users'],
        summary: 'The caller',
        response: { 200: resourceReply(UserReply, 'The caller.'), 304: notModifiedReply, ...problemResponses(401, 403) },
      },
    },
    async (request, reply) => userReply(reply, (await ownUser(request.access)).user),
  );

  app.put(
    '/profile',
    {
      config: { access: { ...OWN_ACCOUNT, account: true } },
      schema: {
        operationId: 'replaceProfile',
        tags: ['users'],
        summary: "Replace the caller's name, email and phone",
        description:
          'A missing `phone` becomes null. Any other field (role, status, balance…) is a 400. Changing `email` (a change of ' +
          'letter case included) needs `current_password` (else 400 naming it; a wrong one is 403 `wrong_password`); the new ' +
          'address gets a verification link, the old one a notice, and reset links stop working. At most 5 email changes in ' +
          '24 hours (429). A body that keeps the email may carry `current_password`, which must then be right. ' +
          REAUTHENTICATION,
        headers: IfMatchHeaders,
        body: ProfileBody,
        response: { 200: resourceReply(UserReply, 'The caller after the change.'), ...problemResponses(400, 401, 403, 409, 412, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const { access } = request;
      const { current_password: currentPassword, email_code: emailCode, ...fields } = request.body;
      // Read first, with the admission: no password is verified for a refused caller, and argon2 holds no transaction.
      const { user, db } = await ownUser(access);
      if (currentPassword !== undefined || emailCode !== undefined) await spendLoginBudget(request, user);
      const checked = await checkReplacement(db, user, { fields, currentPassword, emailCode, accountFailureLimit: loginAccountFailureLimit });
      const work = { mail: app.accountMail, context: contextOf(request) };
      return userReply(reply, await access.transaction((trx, caller) => applyProfileChange(trx, caller.id, request.headers['if-match'], checked, work)));
    },
  );

  app.patch(
    '/profile',
    {
      config: { access: { ...OWN_ACCOUNT, account: true } },
      schema: {
        operationId: 'patchProfile',
        tags: ['users'],
        summary: "Change some of the caller's name, email and phone (JSON merge patch)",
        description:
          'Send `application/merge-patch+json` or `application/json`. `{}` changes nothing and keeps the version. ' +
          'Changing `email` needs `current_password`, as for PUT. ' +
          REAUTHENTICATION,
        headers: IfMatchHeaders,
        body: ProfilePatchBody,
        response: { 200: resourceReply(UserReply, 'The caller after the change.'), ...problemResponses(400, 401, 403, 409, 412, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const { access } = request;
      const { current_password: currentPassword, email_code: emailCode, ...fields } = request.body;
      const { user, db } = await ownUser(access);
      if (currentPassword !== undefined || emailCode !== undefined) await spendLoginBudget(request, user);
      const checked = await checkPatch(db, user, { fields, currentPassword, emailCode, accountFailureLimit: loginAccountFailureLimit });
      const work = { mail: app.accountMail, context: contextOf(request) };
      return userReply(reply, await access.transaction((trx, caller) => applyProfileChange(trx, caller.id, request.headers['if-match'], checked, work)));
    },
  );

  app.delete(
    '/profile',
    {
      config: { access: { ...OWN_ACCOUNT, stepUp: true, directSignInOnly: true } },
      schema: {
        operationId: 'deleteProfile',
        tags: ['users', 'privacy'],
        summary: "Delete the caller's own account",
        description:
          'Needs the current `password` (403 `wrong_password`). The account is deleted as an admin\'s DELETE /api/users/{id} ' +
          'would delete it: its sessions end, its email is free again, its ledger stays, and it is erased after ' +
          '`DELETED_USER_RETENTION_DAYS`. 409 `last_admin` for the last active admin. ' +
          REAUTHENTICATION,
        headers: IfMatchHeaders,
        body: DeleteProfileBody,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...problemResponses(400, 401, 403, 409, 412, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const { access } = request;
      const { user, db } = await ownUser(access);
      // argon2 runs before the transaction; the deletion checks that the hash it verified is still the account's.
      await spendLoginBudget(request, user);
      const sent = { password: request.body.password, emailCode: request.body.email_code, passwordField: 'password' };
      const checked = await reauthenticate(db, user, sent, loginAccountFailureLimit);
      if (!checked) throw proofNeeded(user, 'password', 'to delete the account');
      await access.transaction((trx) => deleteOwnAccount(trx, user.id, request.headers['if-match'], checked, contextOf(request)));
      return reply.code(204).send(null);
    },
  );

  app.put(
    '/change-password',
    {
      config: { noStore: true, access: { ...OWN_ACCOUNT, stepUp: true, directSignInOnly: true } },
      schema: {
        operationId: 'changePassword',
        tags: ['users'],
        summary: "Change the caller's password",
        description:
          'Returns a new token pair; every other refresh token and every older access token of the caller stop working. ' +
          'A `new_password` equal to the current one is a 400; a wrong `current_password` is 403 `wrong_password`. ' +
          REAUTHENTICATION,
        body: ChangePasswordBody,
        response: { 200: Type.Ref(TokenPairSchema), ...problemResponses(400, 401, 403, 413, 415, 429) },
      },
    },
    async (request) => {
      const { access } = request;
      const { user, db } = await ownUser(access);
      await spendLoginBudget(request, user);
      const passwords = { current: request.body.current_password, emailCode: request.body.email_code, next: request.body.new_password };
      const change = await preparePasswordChange(db, user, passwords, loginAccountFailureLimit);
      return access.transaction((trx) => applyPasswordChange(trx, change, tokenIssuer, contextOf(request), clientOf(request)));
    },
  );

  app.get(
    '',
    {
      config: { access: { roles: STAFF, scope: 'users:read' } },
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
      return listPage(request.query, request.access, {
        rows: (page) => request.access.readPage((db) => usersPage(db, filter, page)),
        count: (db) => countUsers(db, filter),
        toItem: (row) => toUserResponse(row, currency),
      });
    },
  );

  app.get(
    '/:id',
    {
      config: { access: { roles: STAFF, orSelf: 'id', scope: 'users:read' } },
      schema: {
        operationId: 'getUser',
        tags: ['users'],
        summary: 'One user (manager, admin, or the user itself)',
        params: IdParams,
        response: { 200: resourceReply(UserReply, 'The user.'), 304: notModifiedReply, ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      // A customer asking for another id is refused by the admission (403) before any 404.
      const [user] = await request.access.read(userById, request.params.id);
      if (!user) throw notFound('user');
      return userReply(reply, user);
    },
  );

  app.delete(
    '/:id',
    {
      config: { access: { roles: ADMIN, scope: 'users:write', stepUp: true } },
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
      const action = { targetId: request.params.id, ifMatch: request.headers['if-match'], reason: request.query.reason };
      await request.access.transaction((trx) => deleteUser(trx, { ...action, context: contextOf(request) }));
      return reply.code(204).send(null);
    },
  );

  /** Role and status: admin-only changes of one field, under the last-admin rule. */
  const adminChange = (
    field: 'role' | 'status',
    body: typeof RoleBody | typeof StatusBody,
    texts: { operationId: string; summary: string; description: string },
    change: (trx: Transaction<Database>, action: AdminAction, value: string) => Promise<UserRow>,
  ) =>
    app.put(
      `/:id/${field}`,
      {
        config: { access: { roles: ADMIN, scope: 'users:write', stepUp: true } },
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
        const action = { targetId: request.params.id, ifMatch: request.headers['if-match'], reason: body.reason };
        return userReply(reply, await request.access.transaction((trx) => change(trx, { ...action, context: contextOf(request) }, body[field]!)));
      },
    );

  adminChange(
    'role',
    RoleBody,
    { operationId: 'changeRole', summary: "Change a user's role (admin)", description: 'Refused with 409 `last_admin` when it would leave no active admin.' },
    (trx, action, value) => changeRole(trx, action, value as Role),
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
    (trx, action, value) => changeStatus(trx, action, value as UserStatus),
  );
};
