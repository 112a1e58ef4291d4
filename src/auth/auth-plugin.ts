import type { FastifyInstance } from 'fastify';
import { accountRoutes, resendRoutes } from './account-routes.js';
import { authRoutes } from './auth-routes.js';
import { sessionRoutes } from './session-routes.js';

/** Register, login, refresh and logout (no access token needed), and the caller's sessions. */
export async function authPlugin(app: FastifyInstance): Promise<void> {
  await app.register(authRoutes, { prefix: '/api/auth' });
  await app.register(accountRoutes, { prefix: '/api/auth' });
  await app.register(
    async (sessions) => {
      sessions.addHook('onRequest', app.authenticate);
      await sessions.register(sessionRoutes);
      await sessions.register(resendRoutes);
    },
    { prefix: '/api/auth' },
  );
}
