import type { FastifyInstance } from 'fastify';
import type { DatabaseHandle } from '../db/database.js';
import type { JobRunner } from '../jobs/job-runner.js';
import type { SigningKeys } from '../sessions/sessions-plugin.js';
import type { TokenIssuer } from '../sessions/token-issuer.js';
import { SERVICE_CONTEXT } from '../events/event-recorder.js';
import { accountRoutes, resendRoutes } from './account-routes.js';
import { authRoutes } from './auth-routes.js';
import { emailCodeRoutes } from './email-code-routes.js';
import { sessionRoutes } from './session-routes.js';
import { signingKeyRoutes } from './signing-key-routes.js';
import { rotateWhenDue } from './signing-key-rotation.js';

const HOUR_MS = 60 * 60 * 1000;

/**
 * Register, login, refresh and logout (no access token needed), the caller's sessions, and the
 * signing keys' rotation (an admin's, or the automatic one every SIGNING_KEY_ROTATION_DAYS).
 */
export async function authPlugin(app: FastifyInstance, options: { database: DatabaseHandle; jobs: JobRunner; signingKeys: SigningKeys; tokenIssuer: TokenIssuer }): Promise<void> {
  await app.register(authRoutes, { prefix: '/api/auth', tokenIssuer: options.tokenIssuer });
  await app.register(emailCodeRoutes, { prefix: '/api/auth', tokenIssuer: options.tokenIssuer });
  for (const routes of [accountRoutes, sessionRoutes, resendRoutes]) await app.register(routes, { prefix: '/api/auth' });
  const { ring, rotation } = options.signingKeys;
  // The routes get the rotation's settings and a reload of this instance's ring, not the ring.
  const reloadKeys = () => ring.reload();
  await app.register(signingKeyRoutes, { prefix: '/api/signing-keys', rotation, reloadKeys });
  const days = app.config.signingKeyRotationDays;
  if (days > 0) {
    options.jobs.add({
      name: 'rotate-signing-key',
      everyMs: HOUR_MS,
      run: async () => {
        if (await rotateWhenDue(options.database.db, days, rotation, SERVICE_CONTEXT)) await ring.reload();
      },
    });
  }
}
