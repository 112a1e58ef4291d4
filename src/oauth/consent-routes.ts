import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { contextOf } from '../events/event-recorder.js';
import { notFound } from '../http/errors.js';
import { problemResponses } from '../http/problem-schema.js';
import { IdParams } from '../http/common-schemas.js';
import { ADMIN, ANY_ROLE, type AccessRule } from '../sessions/access-rule.js';
import { findUserById } from '../users/user-service.js';
import { consentsOfUser } from './consent-repository.js';
import { toConsentResponse } from './consent-response.js';
import { ConsentListSchema, ConsentParams } from './consent-schemas.js';
import { withdrawConsent } from './consent-service.js';

/** The user's own consents: a direct sign-in's token only (an app may not read or withdraw consents). */
const OWN_CONSENTS: AccessRule = { roles: ANY_ROLE, directSignInOnly: true };

/** The apps a user allowed (API.md section 18, "Consent"): listed, and withdrawn. Users only. */
export const consentRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/api/users/profile/apps',
    {
      config: { access: OWN_CONSENTS },
      schema: {
        operationId: 'listMyAppConsents',
        tags: ['users'],
        summary: 'The third-party apps the caller allowed, newest first',
        description:
          'Each consent the caller granted on the consent page: the app, its logo, the scopes as granted (`openid` included) and when. ' +
          'First-party apps never ask, so they are not listed. The list is short (one row per app) and comes whole, without pages.',
        response: { 200: ConsentListSchema, ...problemResponses(401, 403) },
      },
    },
    async (request) => {
      const { access } = request;
      const rows = await access.readPage((db) => consentsOfUser(db, access.ownUserId));
      return { items: rows.map(toConsentResponse) };
    },
  );

  app.get(
    '/api/users/:id/apps',
    {
      config: { access: { roles: ADMIN, directSignInOnly: true } },
      schema: {
        operationId: 'listUserAppConsents',
        tags: ['users'],
        summary: 'The third-party apps a user allowed (admin)',
        description:
          "As GET /api/users/profile/apps, for any user: what the console's page of a user shows. Read only: a consent is the " +
          "user's to withdraw (an admin ends an app's access by disabling the app, or signs the user out). Admins, with a " +
          'direct sign-in; the contract names no such route, and the list is no more than a data export holds. 404 for no such user.',
        params: IdParams,
        response: { 200: ConsentListSchema, ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const userId = request.params.id.toLowerCase();
      const rows = await request.access.transaction(async (trx) => {
        if (!(await findUserById(trx, userId))) throw notFound('user');
        return consentsOfUser(trx, userId).execute();
      });
      return { items: rows.map(toConsentResponse) };
    },
  );

  app.delete(
    '/api/users/profile/apps/:client_id',
    {
      config: { access: OWN_CONSENTS },
      schema: {
        operationId: 'withdrawMyAppConsent',
        tags: ['users'],
        summary: "Withdraw an app's consent and sign the caller out of it",
        description:
          'The consent goes, and every session the app holds for the caller ends: its refresh tokens stop working and its access tokens are ' +
          'refused on their very next request. Records `user.app_revoked`. The app asks for consent again at its next sign-in. 404 when the ' +
          'caller has no consent for that app.',
        params: ConsentParams,
        response: { 204: Type.Null({ description: 'Withdrawn.' }), ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const clientId = request.params.client_id.toLowerCase();
      const withdrawn = await request.access.transaction((trx, caller) => withdrawConsent(trx, caller.id, clientId, contextOf(request)));
      if (!withdrawn) throw notFound('consent');
      return reply.code(204).send(null);
    },
  );
};
