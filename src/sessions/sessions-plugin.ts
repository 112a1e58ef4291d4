import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { Config } from '../config.js';
import { SERVICE_CONTEXT } from '../events/event-recorder.js';
import type { Caller } from './caller-repository.js';
import { authenticationHook, holdToCallerCheck } from './authenticate.js';
import { KeyRing } from './key-ring.js';
import { deleteExpiredRefreshTokens } from './refresh-token-repository.js';
import { SessionSchema, TokenPairSchema } from './session-schemas.js';
import { deleteRetiredSigningKeys } from './signing-key-repository.js';
import { signingKeyRoutes } from './signing-key-routes.js';
import { ensureActiveSigningKey, rotateWhenDue } from './signing-key-service.js';
import { ACCESS_TOKEN_RULES, createTokenIssuer, type TokenIssuer } from './token-issuer.js';

declare module 'fastify' {
  interface FastifyInstance {
    tokenIssuer: TokenIssuer;
    /** Add as an `onRequest` hook to every scope whose routes need an access token. */
    authenticate: onRequestAsyncHookHandler;
  }
}

const HOUR_MS = 60 * 60 * 1000;
// How stale another instance's view of the signing keys may get (an unknown kid reloads at once).
const KEY_RING_REFRESH_MS = 30_000;

/**
 * Access tokens (signing keys, JWKS), the authenticate hook for the areas above, and the
 * loops: key ring refresh, automatic rotation, purges of spent refresh tokens and retired keys.
 */
export const sessionsPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { config: Config }) => {
    const { config } = options;
    let ring: KeyRing | undefined;
    if (!config.jwtSecret) {
      ring = new KeyRing(app.db, { issuer: config.jwtIssuer, audience: config.jwtAudience, ttlSeconds: config.accessTokenTtlSeconds, ...ACCESS_TOKEN_RULES });
      await ensureActiveSigningKey(app.db);
      await ring.reload();
      const keys = ring;
      app.jobs.add({ name: 'refresh-signing-keys', everyMs: KEY_RING_REFRESH_MS, run: () => keys.reload() });
      if (config.signingKeyRotationDays > 0) {
        app.jobs.add({
          name: 'rotate-signing-key',
          everyMs: HOUR_MS,
          run: async () => {
            if (await rotateWhenDue(app.db, config.signingKeyRotationDays, config.accessTokenTtlSeconds, SERVICE_CONTEXT)) await keys.reload();
          },
        });
      }
      app.jobs.add({ name: 'purge-retired-signing-keys', everyMs: HOUR_MS, run: () => deleteRetiredSigningKeys(app.db) });
    }
    const issuer = createTokenIssuer(config, ring);
    app.decorate('tokenIssuer', issuer);
    app.decorate('authenticate', authenticationHook(app, issuer));
    app.decorateRequest('caller', undefined as unknown as Caller);
    app.decorateRequest('identity', undefined as unknown as FastifyRequest['identity']);
    app.decorateRequest('db', undefined as unknown as FastifyRequest['db']);
    app.addHook('onRoute', holdToCallerCheck);
    app.addSchema(TokenPairSchema);
    app.addSchema(SessionSchema);
    app.jobs.add({ name: 'purge-refresh-tokens', everyMs: HOUR_MS, run: () => deleteExpiredRefreshTokens(app.db) });

    const routes = signingKeyRoutes(ring);
    await app.register(routes.jwks);
    await app.register(
      async (keys) => {
        keys.addHook('onRequest', app.authenticate);
        await keys.register(routes.admin);
      },
      { prefix: '/api/signing-keys' },
    );
  },
  { name: 'sessions', dependencies: ['database', 'jobs'] },
);
