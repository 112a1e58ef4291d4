import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { DatabaseHandle } from '../db/database.js';
import type { JobRunner } from '../jobs/job-runner.js';
import type { IdTokenSigner } from '../sessions/id-token-signer.js';
import type { TokenIssuer } from '../sessions/token-issuer.js';
import { deleteLapsedAuthorizationCodes } from './authorization-code-repository.js';
import { consentRoutes } from './consent-routes.js';
import { discoveryRoutes } from './discovery-routes.js';
import { tokenManagementRoutes } from './token-management-routes.js';
import { tokenRoutes } from './token-routes.js';
import { userInfoRoutes } from './userinfo-routes.js';

const HOUR_MS = 3_600_000;

/**
 * The authorization server (API.md sections 11 and 18): the token endpoint and discovery, and
 * the endpoints an app calls with a user's tokens. The hosted pages that sign the user in are signin/'s.
 */
export const oauthPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { tokenIssuer: TokenIssuer; idTokens: IdTokenSigner; database: DatabaseHandle; jobs: JobRunner }) => {
    // Its own context: the token endpoint reads forms and answers errors in OAuth's shape.
    await app.register(tokenRoutes, { tokenIssuer: options.tokenIssuer, idTokens: options.idTokens });
    // Discovery answers problem details (a 404 while the authorization server is off), so not in that context.
    await app.register(discoveryRoutes);
    // A user's consents are the user's own business, whatever the issuer: always on.
    await app.register(consentRoutes);
    // Off without an https issuer (config.authorizationServer): then these are unknown routes (404).
    if (app.config.authorizationServer) {
      await app.register(userInfoRoutes);
      // Their own context too: forms in, OAuth's errors out.
      await app.register(tokenManagementRoutes, { tokenIssuer: options.tokenIssuer });
    }
    options.jobs.add({ name: 'purge-authorization-codes', everyMs: HOUR_MS, run: () => deleteLapsedAuthorizationCodes(options.database.db) });
  },
  { name: 'oauth', dependencies: ['sessions', 'http-frame', 'clients'] },
);
