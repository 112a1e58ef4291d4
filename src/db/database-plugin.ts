import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { Kysely } from 'kysely';
import type { DatabaseHandle } from './database.js';
import { migrateToLatest } from './migrate.js';
import type { Database } from './tables.js';

declare module 'fastify' {
  interface FastifyInstance {
    db: Kysely<Database>;
    database: DatabaseHandle;
  }
}

/** Brings the schema up to date, then lends the database to every plugin; closes it last. */
export const databasePlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { database: DatabaseHandle }) => {
    const { database } = options;
    app.decorate('database', database);
    app.decorate('db', database.db);
    app.addHook('onClose', async () => database.close());
    await migrateToLatest(database.db);
  },
  { name: 'database' },
);
