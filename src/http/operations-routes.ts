import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { DatabaseHandle } from '../db/database.js';
import { unavailable } from './errors.js';
import { problemResponses } from './problem-schema.js';

const Health = Type.Object({ status: Type.Literal('ok') });

export const operationsRoutes: FastifyPluginAsyncTypebox<{ database: DatabaseHandle }> = async (app, options) => {
  app.get(
    '/healthz',
    { config: { unlimited: true }, schema: { operationId: 'health', tags: ['operations'], security: [], summary: 'The process is up', response: { 200: Health } } },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      config: { unlimited: true },
      schema: {
        tags: ['operations'],
        security: [],
        operationId: 'readiness',
        summary: 'The database answers',
        response: { 200: Health, ...problemResponses() },
      },
    },
    async () => {
      try {
        await options.database.ping();
      } catch {
        throw unavailable('The database does not answer.');
      }
      return { status: 'ok' as const };
    },
  );
};
