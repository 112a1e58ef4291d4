import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { Config } from '../config.js';
import type { Caller } from './caller-repository.js';
import { authenticationHook } from './authenticate.js';
import { deleteExpiredRefreshTokens } from './refresh-token-repository.js';
import { SessionSchema, TokenPairSchema } from './session-schemas.js';
import { createTokenIssuer, type TokenIssuer } from './token-issuer.js';

declare module 'fastify' {
  interface FastifyInstance {
    tokenIssuer: TokenIssuer;
    /** Add as an `onRequest` hook to every scope whose routes need an access token. */
    authenticate: onRequestAsyncHookHandler;
  }
}

const HOUR_MS = 60 * 60 * 1000;

/** Access tokens and the authenticate hook for the areas above; refresh tokens past use are purged. */
export const sessionsPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { config: Config }) => {
    const issuer = createTokenIssuer(options.config);
    app.decorate('tokenIssuer', issuer);
    app.decorate('authenticate', authenticationHook(app, issuer));
    app.decorateRequest('caller', undefined as unknown as Caller);
    app.addSchema(TokenPairSchema);
    app.addSchema(SessionSchema);
    app.jobs.add({ name: 'purge-refresh-tokens', everyMs: HOUR_MS, run: () => deleteExpiredRefreshTokens(app.db) });
  },
  { name: 'sessions', dependencies: ['database', 'jobs'] },
);
