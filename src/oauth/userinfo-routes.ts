import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { problemResponses } from '../http/problem-schema.js';
import { ANY_ROLE, type AccessRule } from '../sessions/access-rule.js';
import { userById } from '../users/user-repository.js';
import { claimsForScopes } from './user-claims.js';
import { UserInfoSchema } from './userinfo-schemas.js';

/** An app's token with `openid`: nothing else opens userinfo, and `openid` opens nothing else (access-rule.ts). */
const APP_TOKEN_WITH_OPENID: AccessRule = { roles: ANY_ROLE, appTokenScope: 'openid' };

const DESCRIPTION =
  'OpenID Connect Core §5.3. Send the access token an app holds for the user as `Authorization: Bearer` (in the header only: a body is ' +
  'refused). The reply is `sub` and the claims the token\'s scopes allow, as the ID token carries them: `email` and `email_verified` ' +
  '(`email`), `name` and `updated_at` (`profile`, seconds since the epoch), `phone_number` (`phone`, when the user has one); a scope the ' +
  'app no longer holds gives nothing. The token must carry `openid`: one without it, and the token of a direct sign-in (section 3, which ' +
  'names no app), are 403 `insufficient_scope` with `WWW-Authenticate: Bearer error="insufficient_scope", scope="openid"`. A token whose ' +
  'session ended is 401 `invalid_token` on the very next request. `Cache-Control: no-store`.';

/** `/oauth/userinfo` (API.md section 18): the user an app's token acts for, as far as its scopes tell. */
export const userInfoRoutes: FastifyPluginAsyncTypebox = async (app) => {
  for (const method of ['GET', 'POST'] as const) {
    app.route({
      method,
      url: '/oauth/userinfo',
      config: { access: APP_TOKEN_WITH_OPENID, noStore: true },
      schema: {
        operationId: method === 'GET' ? 'userInfo' : 'userInfoByPost',
        tags: ['oauth'],
        summary: "OpenID Connect UserInfo: the claims an app's token may read of its user",
        description: DESCRIPTION,
        response: { 200: UserInfoSchema, ...problemResponses(400, 401, 403) },
      },
      handler: async (request) => {
        const { access } = request;
        const [user] = await access.read(userById, access.ownUserId);
        const { caller } = await access.admit();
        return { sub: user!.id, ...claimsForScopes(user!, caller.scopes ?? []) };
      },
    });
  }
};
