import type { FastifyInstance } from 'fastify';
import { authRoutes } from './auth-routes.js';

/** Register, login, refresh and logout: the routes that need no access token. */
export async function authPlugin(app: FastifyInstance): Promise<void> {
  await app.register(authRoutes, { prefix: '/api/auth' });
}
