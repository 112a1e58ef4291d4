import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { clientRoutes } from './client-routes.js';
import { ClientSchema, ClientSecretSchema } from './client-schemas.js';

/** API clients and their management (admins); the token endpoint that trades their secrets is the authorization server's (oauth/). */
export const clientsPlugin = fastifyPlugin(
  async (app: FastifyInstance) => {
    app.addSchema(ClientSecretSchema);
    app.addSchema(ClientSchema);
    await app.register(clientRoutes, { prefix: '/api/clients' });
  },
  { name: 'clients', dependencies: ['sessions', 'http-frame'] },
);
