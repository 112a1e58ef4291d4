import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { IdTokenSigner } from '../sessions/id-token-signer.js';
import type { TokenIssuer } from '../sessions/token-issuer.js';
import { discoveryRoutes } from './discovery-routes.js';
import { tokenRoutes } from './token-routes.js';

/**
 * The authorization server (API.md sections 11 and 18): the token endpoint and discovery, and
 * the endpoints an app calls with a user's tokens. The hosted pages that sign the user in are signin/'s.
 */
export const oauthPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { tokenIssuer: TokenIssuer; idTokens: IdTokenSigner }) => {
    // Its own context: the token endpoint reads forms and answers errors in OAuth's shape.
    await app.register(tokenRoutes, { tokenIssuer: options.tokenIssuer, idTokens: options.idTokens });
    // Discovery answers problem details (a 404 while the authorization server is off), so not in that context.
    await app.register(discoveryRoutes);
  },
  { name: 'oauth', dependencies: ['sessions', 'http-frame', 'clients'] },
);
