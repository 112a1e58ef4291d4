import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { DatabaseHandle } from '../db/database.js';
import { deleteExpiredChallenges } from './challenge-repository.js';
import { deleteStaleUnconfirmedFactors } from './factor-repository.js';
import { factorResetRoutes } from './factor-reset-routes.js';
import { deleteExpiredLoginTokens } from './login-token-repository.js';
import { mfaLoginRoutes } from './mfa-login-routes.js';
import { mfaRoutes } from './mfa-routes.js';
import { MfaFactorSchema } from './mfa-schemas.js';
import { passkeySignInRoutes } from './passkey-sign-in-routes.js';
import { mfaSettingsOf, type MfaSettings } from './mfa-settings.js';
import type { JobRunner } from '../jobs/job-runner.js';
import type { TokenIssuer } from '../sessions/token-issuer.js';

const HOUR_MS = 60 * 60 * 1000;

/** Second factors: enrolment, the login's second step, step-up, the admin reset, sign-in by passkey; and their purges. */
export const mfaPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { database: DatabaseHandle; jobs: JobRunner; tokenIssuer: TokenIssuer }) => {
    const { config } = app;
    const settings: MfaSettings = mfaSettingsOf(config, app.secretsAtRest);
    const { db } = options.database;
    options.jobs.add({
      name: 'purge-second-factor-leftovers',
      everyMs: HOUR_MS,
      run: async () => {
        await deleteExpiredChallenges(db);
        await deleteExpiredLoginTokens(db);
        await deleteStaleUnconfirmedFactors(db);
      },
    });
    app.addSchema(MfaFactorSchema);
    await app.register(mfaRoutes, { prefix: '/api/auth/mfa', settings });
    await app.register(mfaLoginRoutes, { prefix: '/api/auth', settings, tokenIssuer: options.tokenIssuer });
    await app.register(passkeySignInRoutes, { prefix: '/api/auth', settings, tokenIssuer: options.tokenIssuer });
    await app.register(factorResetRoutes, { prefix: '/api/users' });
  },
  { name: 'mfa', dependencies: ['sessions', 'users', 'http-frame'] },
);
