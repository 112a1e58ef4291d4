import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { contextOf } from '../events/event-recorder.js';
import { IdParams } from '../http/common-schemas.js';
import { notFound } from '../http/errors.js';
import { problemResponses } from '../http/problem-schema.js';
import { ADMIN, ANY_ROLE, type AccessRule } from '../sessions/access-rule.js';
import { findUserById } from '../users/user-service.js';
import { identitiesOfUser } from './identity-repository.js';
import { toIdentityResponse } from './identity-response.js';
import { IdentityListSchema } from './identity-schemas.js';
import { unlinkIdentity } from './identity-service.js';

/** The user's own identities: a direct sign-in's token only, as the apps it allowed (an app may not unlink a way of signing in). */
const OWN_IDENTITIES: AccessRule = { roles: ANY_ROLE, directSignInOnly: true };

/** The identities at other providers linked to the caller (API.md section 20): listed, and unlinked. */
export const identityRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/api/users/profile/identities',
    {
      config: { access: OWN_IDENTITIES },
      schema: {
        operationId: 'listMyIdentities',
        tags: ['users'],
        summary: 'The identities at other providers the caller signs in with',
        description:
          'Each identity linked to the caller: its provider (by id and name), the email the provider gave, when it was linked and last used. ' +
          "The provider's subject (`sub`) is not shown. Short, and whole: no pages.",
        response: { 200: IdentityListSchema, ...problemResponses(401, 403) },
      },
    },
    async (request) => {
      const { access } = request;
      const rows = await access.readPage((db) => identitiesOfUser(db, access.ownUserId));
      return { items: rows.map(toIdentityResponse) };
    },
  );

  app.get(
    '/api/users/:id/identities',
    {
      config: { access: { roles: ADMIN, directSignInOnly: true } },
      schema: {
        operationId: 'listUserIdentities',
        tags: ['users'],
        summary: "The identities at other providers linked to a user (admin)",
        description:
          "As GET /api/users/profile/identities, for any user: what the console's page of a user shows. Read only: unlinking is the " +
          "user's (deleting the provider removes every identity of it). Admins, with a direct sign-in; the contract names no such " +
          'route, and the list is no more than a data export holds. 404 for no such user.',
        params: IdParams,
        response: { 200: IdentityListSchema, ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const userId = request.params.id.toLowerCase();
      const rows = await request.access.transaction(async (trx) => {
        if (!(await findUserById(trx, userId))) throw notFound('user');
        return identitiesOfUser(trx, userId).execute();
      });
      return { items: rows.map(toIdentityResponse) };
    },
  );

  app.delete(
    '/api/users/profile/identities/:id',
    {
      config: { access: OWN_IDENTITIES },
      schema: {
        operationId: 'unlinkMyIdentity',
        tags: ['users'],
        summary: 'Unlink one of the caller\'s identities at another provider',
        description:
          'The identity is no longer linked to the caller. Every account can still sign in by email code (section 19), so the last identity may go ' +
          'too. Records `user.identity_unlinked`. 404 for an identity that is not the caller\'s (or none).',
        params: IdParams,
        response: { 204: Type.Null({ description: 'Unlinked.' }), ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const id = request.params.id.toLowerCase();
      const unlinked = await request.access.transaction((trx, caller) => unlinkIdentity(trx, caller.id, id, contextOf(request)));
      if (!unlinked) throw notFound('identity');
      return reply.code(204).send(null);
    },
  );
};
