import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { Registry } from 'prom-client';
import { authPlugin } from './auth/auth-plugin.js';
import { clientsPlugin } from './clients/clients-plugin.js';
import { noteClientUsed } from './clients/client-service.js';
import type { Config } from './config.js';
import type { DatabaseHandle } from './db/database.js';
import { databasePlugin } from './db/database-plugin.js';
import { eventsPlugin } from './events/events-plugin.js';
import { federationPlugin } from './federation/federation-plugin.js';
import { webhooksDocument } from './events/webhook-payloads.js';
import { apiIntroduction } from './api-introduction.js';
import { registerAdminConsole } from './http/admin-console.js';
import { httpFramePlugin } from './http/http-frame.js';
import { methodNotAllowedPlugin } from './http/method-not-allowed.js';
import { metricsPlugin } from './http/metrics.js';
import { mfaPlugin } from './mfa/mfa-plugin.js';
import { oauthPlugin } from './oauth/oauth-plugin.js';
import { privacyPlugin } from './privacy/privacy-plugin.js';
import { signinPlugin } from './signin/signin-plugin.js';
import type { Tracing } from './tracing.js';
import { importsPlugin } from './imports/imports-plugin.js';
import { openApiPlugin } from './http/openapi.js';
import { operationsRoutes } from './http/operations-routes.js';
import { routeTablePlugin } from './http/route-table.js';
import { securityPlugin } from './http/security.js';
import { MAX_PARAM_LENGTH, serverOptions } from './http/server-options.js';
import { inventoryPlugin } from './inventory/inventory-plugin.js';
import { JobRunner, jobsPlugin } from './jobs/job-runner.js';
import { mailPlugin } from './mail/mail-plugin.js';
import { describeAccess, SCOPES } from './sessions/access-rule.js';
import { openSigningKeys, sessionsPlugin } from './sessions/sessions-plugin.js';
import type { IdTokenSigner } from './sessions/id-token-signer.js';
import { createTokenIssuer } from './sessions/token-issuer.js';
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
  /** Tracing, when the OTEL_* variables ask for it (src/tracing.ts). */
  tracing?: Tracing | undefined;
  /** Where what the person starting the service must read goes (the generated first-admin password); stderr by default. */
  tellOperator?: (line: string) => void;
}

/**
 * The app and its background runner. The runner is no decorator (its jobs and queues hold the
 * database, and a handler sees every decorator through `request.server`): the plugins that add
 * work get it in their options, and whoever builds the app (server.ts, tests, bench) gets it here.
 */
export interface BuiltApp {
  app: FastifyInstance;
  jobs: JobRunner;
  /** The figures GET /metrics serves, read now (a queue's gauges query the database). */
  metricsRegistry: Registry;
  /** Signs ID tokens with the service's keys (for the authorization server, API.md section 18). */
  idTokens: IdTokenSigner;
}

/** Builds the app: the ground floors first, then the shared services, then each area. */
export async function buildApp(options: AppOptions): Promise<BuiltApp> {
  const { config } = options;
  const app = Fastify(serverOptions(config, options.logger, options.tracing !== undefined)).withTypeProvider<TypeBoxTypeProvider>();
  // First, so every route registered after it gets its server span.
  if (options.tracing) await app.register(options.tracing.plugin);
  app.decorate('config', config);

  // The database, the runner and the signing keys go to each plugin that runs work of its own
  // (jobs, start-up) in its options, never as decorators: routes reach the database only through
  // the admission of their request (sessions/admission.ts).
  const { database } = options;
  const jobs = new JobRunner(app.log);
  const metricsRegistry = new Registry();
  await app.register(routeTablePlugin);
  await app.register(databasePlugin, { database });
  await app.register(jobsPlugin, { jobs });
  await app.register(metricsPlugin, { token: config.metricsToken, database, registry: metricsRegistry });
  await app.register(httpFramePlugin, { database, jobs });
  await app.register(securityPlugin, { config });
  await app.register(methodNotAllowedPlugin, { maxParamLength: MAX_PARAM_LENGTH });
  await app.register(openApiPlugin, { config, describeAccess, scopes: { ...SCOPES }, webhooks: webhooksDocument(), introduction: apiIntroduction(config) });
  await registerAdminConsole(app);
  await app.register(operationsRoutes, { database });

  const signingKeys = await openSigningKeys(config, database.db, jobs);
  // The issuer verifies with the key ring, which reads the database for a key it does not know yet.
  const tokenIssuer = createTokenIssuer(config, signingKeys.ring);
  // The admission notes an API client's use; the clients area, which owns api_clients, writes it.
  await app.register(sessionsPlugin, { config, database, jobs, signingKeys, tokenIssuer, noteClientUse: noteClientUsed });
  await app.register(mailPlugin, { database, jobs });
  await app.register(usersPlugin, { database, jobs, tokenIssuer, tellOperator: options.tellOperator });
  await app.register(authPlugin, { database, jobs, signingKeys, tokenIssuer });
  await app.register(mfaPlugin, { database, jobs, tokenIssuer });
  await app.register(inventoryPlugin, { database, jobs });
  await app.register(variantsPlugin);
  await app.register(eventsPlugin, { database, jobs });
  await app.register(privacyPlugin, { database, jobs });
  await app.register(importsPlugin, { database, jobs });
  await app.register(clientsPlugin);
  await app.register(federationPlugin, { database, jobs });
  if (!config.authorizationServer) {
    app.log.warn({ issuer: config.jwtIssuer }, 'JWT_ISSUER is not an https URL (or http on a loopback host): the authorization server of customer sign-in (/oauth/…, OpenID discovery, the code and refresh grants) is off');
  }
  await app.register(oauthPlugin, { tokenIssuer, idTokens: signingKeys.idTokens, database, jobs });
  await app.register(signinPlugin, { tokenIssuer, idTokens: signingKeys.idTokens });
  return { app, jobs, metricsRegistry, idTokens: signingKeys.idTokens };
}
