import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { DatabaseHandle } from '../db/database.js';
import { eraseDeletedUsersPastRetention } from './erasure-service.js';
import { privacyRoutes } from './privacy-routes.js';

const HOUR_MS = 60 * 60 * 1000;

/** Data exports, erasure, and the retention that erases deleted users by itself. */
export const privacyPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { database: DatabaseHandle }) => {
    const { db } = options.database;
    const days = app.config.deletedUserRetentionDays;
    app.jobs.add({ name: 'erase-deleted-users', everyMs: HOUR_MS, run: () => eraseDeletedUsersPastRetention(db, days, app.log) });
    await app.register(privacyRoutes, { prefix: '/api/users' });
  },
  { name: 'privacy', dependencies: ['sessions', 'users', 'mfa', 'events', 'http-frame', 'jobs'] },
);
