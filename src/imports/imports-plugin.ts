import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { DatabaseHandle } from '../db/database.js';
import { deleteAbandonedUploads, purgeImportsFinishedBefore, settleImportRun } from './import-repository.js';
import { importRoutes } from './import-routes.js';
import { ImportSchema } from './import-schemas.js';
import { finishAbandoned, runImport } from './import-service.js';
import { outsideAnyTrace } from '../tracing.js';
import type { JobRunner } from '../jobs/job-runner.js';

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;
const MAX_ATTEMPTS = 5;

/**
 * Catalogue files: imports run on the work queue (jobs/work-queue.ts) by whichever instance
 * claims them, one at a time per instance, under a one-minute lease renewed while they run (an
 * instance that dies leaves its import to another within a minute); and exports.
 */
export const importsPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { database: DatabaseHandle; jobs: JobRunner }) => {
    const { db, concurrent } = options.database;
    const runner = { db, concurrent };
    const queue = options.jobs.addQueue(db, {
      name: 'run-imports',
      table: 'variant_imports',
      settle: settleImportRun,
      dueStatuses: ['pending', 'running'],
      deadlineMs: 6 * HOUR_MS,
      leaseSeconds: 60,
      renewLeaseEveryMs: 15_000,
      concurrency: 1,
      // A run that failed (the database went away) is tried again, from its checkpoint.
      retryDelaySeconds: (row) => (row.attempts < MAX_ATTEMPTS ? 15 * row.attempts : undefined),
      attempt: (row, signal) => runImport(runner, row, signal),
      afterSettle: async (trx, row, attempt, outcome) => {
        if (outcome === 'failed' && !attempt.ok) await finishAbandoned(trx, row);
      },
    });
    options.jobs.add({ name: 'purge-import-uploads', everyMs: HOUR_MS, run: () => deleteAbandonedUploads(db) });
    // Failed rows keep what a file held: IMPORT_RETENTION_DAYS after an import ends, it goes with them.
    const { importRetentionDays, importMaxBytes, importMaxActive } = app.config;
    options.jobs.add({ name: 'purge-finished-imports', everyMs: HOUR_MS, run: () => purgeImportsFinishedBefore(db, new Date(Date.now() - importRetentionDays * DAY_MS)) });
    app.addSchema(ImportSchema);
    await app.register(importRoutes, { prefix: '/api/variants', maxBytes: importMaxBytes, maxActive: importMaxActive, wake: () => void outsideAnyTrace(() => queue.pass()).catch(() => undefined) });
    app.reserveLiteralSegments(['/api/variants/imports', '/api/variants/export']);
  },
  { name: 'imports', dependencies: ['sessions', 'variants', 'events', 'http-frame', 'method-not-allowed'] },
);
