import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify';
import fastifyPlugin from 'fastify-plugin';

/** A route as registered: what walks over every route (a test, the OpenAPI scopes) reads. */
export interface RouteEntry {
  method: string;
  url: string;
  config: RouteOptions['config'];
  schema: FastifySchema | undefined;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route the app serves, as registered, so that a walk over them cannot forget one. */
    routeTable: RouteEntry[];
  }
}

/** Records each route as it is registered; register it before any route. */
export const routeTablePlugin = fastifyPlugin(
  async (app: FastifyInstance) => {
    const routes: RouteEntry[] = [];
    app.decorate('routeTable', routes);
    app.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) routes.push({ method, url: route.url, config: route.config, schema: route.schema });
    });
  },
  { name: 'route-table' },
);
