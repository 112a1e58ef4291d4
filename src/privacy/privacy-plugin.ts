import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { DatabaseHandle } from '../db/database.js';
import { eraseDeletedUsersPastRetention } from './erasure-service.js';
import { privacyRoutes } from './privacy-routes.js';
import type { JobRunner } from '../jobs/job-runner.js';

const HOUR_MS = 60 * 60 * 1000;

/** Data exports, erasure, and the retention that erases deleted users by itself. */
export const privacyPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { database: DatabaseHandle; jobs: JobRunner }) => {
    const { db } = options.database;
    const days = app.config.deletedUserRetentionDays;
    options.jobs.add({ name: 'erase-deleted-users', everyMs: HOUR_MS, run: () => eraseDeletedUsersPastRetention(db, days, app.log) });
    await app.register(privacyRoutes, { prefix: '/api/users' });
  },
  { name: 'privacy', dependencies: ['sessions', 'users', 'mfa', 'events', 'http-frame'] },
);
