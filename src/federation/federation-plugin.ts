import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { DatabaseHandle } from '../db/database.js';
import type { JobRunner } from '../jobs/job-runner.js';
import { identityConnectRoutes } from './identity-connect-routes.js';
import { identityRoutes } from './identity-routes.js';
import { providerRoutes } from './provider-routes.js';
import { IdentityProviderSchema } from './provider-schemas.js';
import { rereadDueDiscoveries } from './provider-service.js';
import { purgeFederatedSignIns } from './federated-signin-service.js';

/**
 * How often the re-read looks for a provider due (each is read at most once an hour, whichever
 * instance claims it): a few minutes, so a provider is read again soon after its hour.
 */
const REREAD_LOOK_EVERY_MS = 5 * 60 * 1000;
const PURGE_EVERY_MS = 60 * 60 * 1000;

/**
 * Sign in with another identity provider (API.md section 20): the providers an admin connects
 * (their credentials sealed with the service's secrets at rest), the hourly re-read of their
 * discovery documents, and the identities linked to users, which users list and unlink.
 */
export const federationPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { database: DatabaseHandle; jobs: JobRunner }) => {
    const { db } = options.database;
    app.addSchema(IdentityProviderSchema);
    await app.register(providerRoutes, { prefix: '/api/identity-providers', secrets: app.secretsAtRest });
    await app.register(identityRoutes);
    await app.register(identityConnectRoutes, { connecting: app.config.authorizationServer });
    // Not an identity's id: another method on it is 405, not a DELETE of an identity named "connect".
    if (app.config.authorizationServer) app.reserveLiteralSegments(['/api/users/profile/identities/connect']);
    // A sign-in under way lives 10 minutes; its row is of no use after.
    options.jobs.add({ name: 'purge-federated-sign-ins', everyMs: PURGE_EVERY_MS, run: () => purgeFederatedSignIns(db) });
    options.jobs.add({ name: 'reread-provider-discovery', everyMs: REREAD_LOOK_EVERY_MS, run: () => rereadDueDiscoveries(db, app.log) });
  },
  { name: 'federation', dependencies: ['sessions', 'http-frame', 'method-not-allowed'] },
);
