import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { DatabaseHandle } from '../db/database.js';
import type { JobRunner } from '../jobs/job-runner.js';
import type { TokenIssuer } from '../sessions/token-issuer.js';
import type { MailSettings } from './account-emails.js';
import { deleteStaleAccountAttempts } from './account-attempt-repository.js';
import { clearExpiredSealedTokens } from './account-token-repository.js';
import { deleteStaleEmailCodes } from './email-code-repository.js';
import { balanceRoutes } from './balance-routes.js';
import { LedgerEntrySchema } from './balance-schemas.js';
import { ensureFirstAdmin } from './first-admin.js';
import { userRoutes } from './user-routes.js';
import { userSessionRoutes } from './user-session-routes.js';
import { UserSchema } from './user-schemas.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** What account emails need: link templates and lifetimes, and the sealing of live links. */
    accountMail: MailSettings;
  }
}

export interface UsersOptions {
  database: DatabaseHandle;
  jobs: JobRunner;
  /** Signs the token pair a password change answers with. */
  tokenIssuer: TokenIssuer;
  /** Where the generated first-admin password goes; stderr by default. */
  tellOperator?: ((line: string) => void) | undefined;
}

const HOUR_MS = 60 * 60 * 1000;

/** Accounts: profile, admin actions, the balance ledger; the first admin on first start. */
export const usersPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: UsersOptions) => {
    const { config } = app;
    const mail: MailSettings = {
      passwordResetUrl: config.passwordResetUrl,
      emailVerificationUrl: config.emailVerificationUrl,
      passwordResetTtlSeconds: config.passwordResetTtlSeconds,
      emailVerificationTtlSeconds: config.emailVerificationTtlSeconds,
      emailCodeTtlSeconds: config.emailCodeTtlSeconds,
      secrets: app.secretsAtRest,
    };
    app.decorate('accountMail', mail);
    const { db } = options.database;
    await ensureFirstAdmin(db, { email: config.adminEmail, password: config.adminPassword }, app.log, mail, options.tellOperator);
    options.jobs.add({ name: 'purge-account-attempts', everyMs: HOUR_MS, run: () => deleteStaleAccountAttempts(db) });
    options.jobs.add({ name: 'clear-expired-links', everyMs: HOUR_MS, run: () => clearExpiredSealedTokens(db) });
    options.jobs.add({ name: 'purge-email-codes', everyMs: HOUR_MS, run: () => deleteStaleEmailCodes(db) });
    app.addSchema(UserSchema);
    app.addSchema(LedgerEntrySchema);
    await app.register(userRoutes, { prefix: '/api/users', tokenIssuer: options.tokenIssuer });
    for (const routes of [balanceRoutes, userSessionRoutes]) await app.register(routes, { prefix: '/api/users' });
    app.reserveLiteralSegments(['/api/users/profile', '/api/users/change-password']);
  },
  { name: 'users', dependencies: ['sessions', 'http-frame', 'method-not-allowed'] },
);
