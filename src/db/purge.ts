import type { FastifyInstance } from 'fastify';
import { deleteExpiredRefreshTokens } from '../auth/refresh-token-repository.js';
import { deleteExpiredIdempotencyKeys } from '../users/idempotency-keys.js';

const PURGE_INTERVAL_MS = 60 * 60 * 1000;

/**
 * Deletes idempotency keys past their 24 hours and long-expired refresh tokens, hourly.
 * Every instance runs it; the deletes are idempotent, so running it twice costs nothing.
 */
export function schedulePurges(app: FastifyInstance): void {
  const purge = async () => {
    try {
      const keys = await deleteExpiredIdempotencyKeys(app.db);
      const tokens = await deleteExpiredRefreshTokens(app.db);
      app.log.debug({ keys, tokens }, 'purged expired idempotency keys and refresh tokens');
    } catch (error) {
      app.log.warn({ err: error }, 'purge failed; it will run again');
    }
  };
  const timer = setInterval(purge, PURGE_INTERVAL_MS);
  timer.unref();
  app.addHook('onClose', async () => clearInterval(timer));
}
