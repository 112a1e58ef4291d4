import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { DatabaseHandle } from './database.js';
import { migrateToLatest } from './migrate.js';

/**
 * Brings the schema up to date, and closes the database last. It decorates nothing: the app
 * hands the handle to the plugins that run work of their own, and a request reaches the
 * database only through its admission.
 */
export const databasePlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { database: DatabaseHandle }) => {
    const { database } = options;
    app.addHook('onClose', async () => database.close());
    await migrateToLatest(database.db);
  },
  { name: 'database' },
);
