import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { contextOf } from '../events/event-recorder.js';
import { IdParams } from '../http/common-schemas.js';
import { problemResponses } from '../http/problem-schema.js';
import { ADMIN } from '../sessions/access-rule.js';
import { resetFactors } from './factor-service.js';

/** An admin's reset of a user's second factors (API.md section 12). */
export const factorResetRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.delete(
    '/:id/mfa',
    {
      config: { access: { roles: ADMIN, stepUp: true, directSignInOnly: true } },
      schema: {
        operationId: 'resetUserMfa',
        tags: ['users', 'mfa'],
        summary: "Reset a user's second factors (admin)",
        description:
          'Every factor and recovery code of the user is removed, its sessions end (and any login waiting for its second step), and ' +
          'an email tells the user, also when it had no factor. An admin removes their own factors under /api/auth/mfa/factors ' +
          'instead (403 `forbidden` here). 404 for an unknown or deleted user.',
        params: IdParams,
        response: { 204: Type.Null({ description: 'Reset.' }), ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const { access } = request;
      await access.transaction((trx, caller) => resetFactors(trx, request.params.id.toLowerCase(), caller.id, contextOf(request)));
      return reply.code(204).send(null);
    },
  );
};
