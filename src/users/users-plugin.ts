import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { balanceRoutes } from './balance-routes.js';
import { LedgerEntrySchema } from './balance-schemas.js';
import { ensureFirstAdmin } from './first-admin.js';
import { userRoutes } from './user-routes.js';
import { userSessionRoutes } from './user-session-routes.js';
import { UserSchema } from './user-schemas.js';

export interface UsersOptions {
  /** Where the generated first-admin password goes; stderr by default. */
  printSecret?: ((line: string) => void) | undefined;
}

/** Accounts: profile, admin actions, the balance ledger; the first admin on first start. */
export const usersPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: UsersOptions) => {
    const { config } = app;
    await ensureFirstAdmin(app.db, { email: config.adminEmail, password: config.adminPassword }, app.log, config, options.printSecret);
    app.addSchema(UserSchema);
    app.addSchema(LedgerEntrySchema);
    await app.register(
      async (users) => {
        users.addHook('onRequest', app.authenticate);
        await users.register(userRoutes);
        await users.register(balanceRoutes);
        await users.register(userSessionRoutes);
      },
      { prefix: '/api/users' },
    );
    app.reserveLiteralSegments(['/api/users/profile', '/api/users/change-password']);
  },
  { name: 'users', dependencies: ['sessions', 'http-frame', 'method-not-allowed'] },
);
