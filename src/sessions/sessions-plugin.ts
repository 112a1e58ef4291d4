import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { Config } from '../config.js';
import type { Kysely } from 'kysely';
import type { DatabaseHandle } from '../db/database.js';
import type { Database } from '../db/tables.js';
import { admissionHooks, requireAccessRule, type NoteClientUse } from './authenticate.js';
import { createIdTokenSigner, type IdTokenSigner } from './id-token-signer.js';
import { KeyRing } from './key-ring.js';
import { deleteExpiredRefreshTokens } from './refresh-token-repository.js';
import { purgeSessionsEndedBefore } from './session-repository.js';
import { SecretsAtRest } from './secrets-at-rest.js';
import { SessionSchema, TokenPairSchema } from './session-schemas.js';
import { deleteRetiredSigningKeys } from './signing-key-repository.js';
import { jwksRoutes } from './jwks-routes.js';
import { ensureActiveSigningKeys, type RotationSettings } from './signing-key-service.js';
import { ACCESS_TOKEN_RULES, type TokenIssuer } from './token-issuer.js';
import type { JobRunner } from '../jobs/job-runner.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Seals the secrets the service must read back (SIGNING_KEY_ENCRYPTION_KEY). */
    secretsAtRest: SecretsAtRest;
  }
}

/**
 * The signing keys in memory (Ed25519 and RSA; with JWT_SECRET they sign ID tokens only), how a
 * rotation makes the next ones, and the signer of ID tokens for the authorization server. The
 * ring reads the database when it reloads, so it is no decorator: app.ts hands it to the
 * plugins that rotate keys.
 */
export interface SigningKeys {
  ring: KeyRing;
  rotation: RotationSettings;
  idTokens: IdTokenSigner;
}

const HOUR_MS = 60 * 60 * 1000;
// How stale another instance's view of the signing keys may get (an unknown kid reloads at once).
const KEY_RING_REFRESH_MS = 30_000;

/**
 * The signing keys at start: the active key of each algorithm made if there is none, the ring loaded, and its
 * loops (refresh, purge of retired keys) added to the runner.
 */
export async function openSigningKeys(config: Config, db: Kysely<Database>, jobs: JobRunner): Promise<SigningKeys> {
  const secrets = new SecretsAtRest(config.signingKeyEncryptionKey);
  const rotation = { secrets, accessTokenTtlSeconds: config.accessTokenTtlSeconds };
  // With JWT_SECRET access tokens are HS256 (token-issuer.ts): the keys still exist, for ID tokens.
  const accessTokenRules = config.jwtSecret ? undefined : { issuer: config.jwtIssuer, audience: config.jwtAudience, ttlSeconds: config.accessTokenTtlSeconds, ...ACCESS_TOKEN_RULES };
  const ring = new KeyRing(db, secrets, accessTokenRules);
  await ensureActiveSigningKeys(db, secrets);
  await ring.reload();
  jobs.add({ name: 'refresh-signing-keys', everyMs: KEY_RING_REFRESH_MS, run: () => ring.reload() });
  jobs.add({ name: 'purge-retired-signing-keys', everyMs: HOUR_MS, run: () => deleteRetiredSigningKeys(db) });
  return { ring, rotation, idTokens: createIdTokenSigner(ring, config.jwtIssuer) };
}

/**
 * Access tokens (signing keys, JWKS), the admission of every request (authenticate.ts,
 * admission.ts), and the loops: key ring refresh, purges of spent refresh tokens and retired
 * keys. (Rotations record events, so they are the auth area's.)
 */
export const sessionsPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { config: Config; database: DatabaseHandle; jobs: JobRunner; signingKeys: SigningKeys; tokenIssuer: TokenIssuer; noteClientUse: NoteClientUse }) => {
    const { config } = options;
    const db = options.database.db;
    const { ring, rotation } = options.signingKeys;
    app.decorate('secretsAtRest', rotation.secrets);
    const admission = admissionHooks(app, db, options.tokenIssuer, options.noteClientUse);
    app.decorateRequest('access', undefined as never);
    app.addHook('onRoute', requireAccessRule);
    app.addHook('onRequest', admission.onRequest);
    app.addHook('onSend', admission.onSend);
    app.addSchema(TokenPairSchema);
    app.addSchema(SessionSchema);
    options.jobs.add({ name: 'purge-refresh-tokens', everyMs: HOUR_MS, run: () => deleteExpiredRefreshTokens(db) });
    // Ended and expired sessions keep an address and a user agent: SESSION_RETENTION_DAYS after they end, they go.
    options.jobs.add({
      name: 'purge-ended-sessions',
      everyMs: HOUR_MS,
      run: () => purgeSessionsEndedBefore(db, new Date(Date.now() - config.sessionRetentionDays * 24 * HOUR_MS)),
    });

    await app.register(jwksRoutes(ring));
  },
  { name: 'sessions' },
);
