import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { clientRoutes } from './client-routes.js';
import { ClientSchema, ClientSecretSchema } from './client-schemas.js';
import { tokenRoutes } from './token-routes.js';
import type { TokenIssuer } from '../sessions/token-issuer.js';

/** API clients: their management (admins), the OAuth token endpoint and its discovery document. */
export const clientsPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { tokenIssuer: TokenIssuer }) => {
    app.addSchema(ClientSecretSchema);
    app.addSchema(ClientSchema);
    await app.register(clientRoutes, { prefix: '/api/clients' });
    // Its own context: the token endpoint reads forms and answers errors in OAuth's shape.
    await app.register(tokenRoutes, { tokenIssuer: options.tokenIssuer });
  },
  { name: 'clients', dependencies: ['sessions', 'http-frame'] },
);
