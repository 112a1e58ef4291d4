import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { authPlugin } from './auth/auth-plugin.js';
import type { Config } from './config.js';
import type { DatabaseHandle } from './db/database.js';
import { databasePlugin } from './db/database-plugin.js';
import { eventsPlugin } from './events/events-plugin.js';
import { registerAdminConsole } from './http/admin-console.js';
import { httpFramePlugin } from './http/http-frame.js';
import { methodNotAllowedPlugin } from './http/method-not-allowed.js';
import { metricsPlugin } from './http/metrics.js';
import { openApiPlugin } from './http/openapi.js';
import { operationsRoutes } from './http/operations-routes.js';
import { securityPlugin } from './http/security.js';
import { MAX_PARAM_LENGTH, serverOptions } from './http/server-options.js';
import { inventoryPlugin } from './inventory/inventory-plugin.js';
import { jobsPlugin } from './jobs/job-runner.js';
import { mailPlugin } from './mail/mail-plugin.js';
import { sessionsPlugin } from './sessions/sessions-plugin.js';
import { usersPlugin } from './users/users-plugin.js';
import { variantsPlugin } from './variants/variants-plugin.js';

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
  }
}

export interface AppOptions {
  config: Config;
  database: DatabaseHandle;
  logger?: FastifyServerOptions['logger'];
  /** Where the generated first-admin password goes; stderr by default. */
  printSecret?: (line: string) => void;
}

/** Builds the app: the ground floors first, then the shared services, then each area. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config } = options;
  const app = Fastify(serverOptions(config, options.logger)).withTypeProvider<TypeBoxTypeProvider>();
  app.decorate('config', config);

  await app.register(databasePlugin, { database: options.database });
  await app.register(jobsPlugin);
  await app.register(metricsPlugin, { token: config.metricsToken });
  await app.register(httpFramePlugin);
  await app.register(securityPlugin, { config });
  await app.register(methodNotAllowedPlugin, { maxParamLength: MAX_PARAM_LENGTH });
  await app.register(openApiPlugin, { config });
  await registerAdminConsole(app);
  await app.register(operationsRoutes);

  await app.register(sessionsPlugin, { config });
  await app.register(mailPlugin);
  await app.register(usersPlugin, { printSecret: options.printSecret });
  await app.register(authPlugin);
  await app.register(variantsPlugin);
  await app.register(inventoryPlugin);
  await app.register(eventsPlugin);
  return app;
}
