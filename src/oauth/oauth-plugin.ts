import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { TokenIssuer } from '../sessions/token-issuer.js';
import { tokenRoutes } from './token-routes.js';

/**
 * The authorization server (API.md sections 11 and 18): the token endpoint and discovery, and
 * the endpoints an app calls with a user's tokens. The hosted pages that sign the user in are signin/'s.
 */
export const oauthPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { tokenIssuer: TokenIssuer }) => {
    // Its own context: the token endpoint reads forms and answers errors in OAuth's shape.
    await app.register(tokenRoutes, { tokenIssuer: options.tokenIssuer });
  },
  { name: 'oauth', dependencies: ['sessions', 'http-frame', 'clients'] },
);
