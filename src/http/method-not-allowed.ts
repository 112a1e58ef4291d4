import type { FastifyInstance, FastifyRequest } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { AppError, notFound } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set on the routes that only keep a literal segment from being read as an {id}. */
    literalSegmentGuard?: boolean;
  }
  interface FastifyInstance {
    /**
     * Declares literal path segments (`/api/users/profile`) that must never be read as an
     * `{id}`: a method the path lacks gets 405 with its exact `Allow`, and a deeper path
     * (`/api/users/profile/role`) that no route of the literal serves gets 404. Call it after
     * the routes under those paths are registered.
     */
    reserveLiteralSegments(paths: string[]): void;
  }
}

const GUARDED_METHODS: HTTPMethod[] = ['GET', 'PUT', 'POST', 'DELETE', 'PATCH'];

const methodNotAllowed = (allowed: string[]) =>
  new AppError('method_not_allowed', `Use one of: ${allowed.join(', ')}.`, undefined, { allow: allowed.join(', ') });

const isStatic = (pattern: string) => !pattern.includes(':') && !pattern.includes('*');

/**
 * Fastify answers an unknown method with 404. To answer 405 with `Allow`, every route is
 * mirrored into a second router that is asked, on a miss, which methods the path has.
 */
export const methodNotAllowedPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { maxParamLength: number }) => {
    const mirror = FindMyWay({ maxParamLength: options.maxParamLength });
    const methods = new Set<HTTPMethod>();
    app.addHook('onRoute', (route) => {
      if (route.config?.literalSegmentGuard) return;
      for (const method of [route.method].flat() as HTTPMethod[]) {
        methods.add(method);
        mirror.on(method, route.url, () => {}, { url: route.url });
      }
    });

    const routesAt = (path: string) =>
      [...methods].flatMap((method) => {
        const found = mirror.find(method, path);
        return found ? [{ method, pattern: (found.store as { url: string }).url }] : [];
      });
    /** The methods served at `path`; a route written for exactly this path hides `{id}` routes that also match. */
    const allowedMethods = (path: string) => {
      const matches = routesAt(path);
      const relevant = matches.some((match) => isStatic(match.pattern)) ? matches.filter((match) => isStatic(match.pattern)) : matches;
      return relevant.map((match) => match.method);
    };
    const methodsOfRoutesUnder = (path: string, literal: string) =>
      routesAt(path)
        .filter((match) => match.pattern === literal || match.pattern.startsWith(`${literal}/`))
        .map((match) => match.method);

    const refuse = async (request: FastifyRequest) => {
      const allowed = allowedMethods(request.url.split('?')[0] ?? '/');
      // A route of this method matched (a wildcard such as the console's files) and found nothing: 404.
      if (allowed.length > 0 && !allowed.includes(request.method as HTTPMethod)) throw methodNotAllowed(allowed);
      throw notFound('route');
    };
    // Answered before any body is read: an unknown path or method has nothing to parse.
    app.addHook('onRequest', (request, _reply, done) => {
      if (!request.is404) return done();
      refuse(request).then(() => done(), done);
    });
    app.setNotFoundHandler(refuse);

    app.decorate('reserveLiteralSegments', (paths: string[]) => {
      for (const path of paths) {
        const allowed = methodsOfRoutesUnder(path, path);
        const missing = GUARDED_METHODS.filter((method) => !allowed.includes(method));
        if (missing.length > 0) {
          app.route({
            method: missing,
            url: path,
            config: { literalSegmentGuard: true },
            schema: { hide: true },
            handler: async () => {
              throw allowed.length > 0 ? methodNotAllowed(allowed) : notFound('route');
            },
          });
        }
        // An empty segment after the literal would otherwise reach a `{param}` route as an empty value.
        app.route({
          method: GUARDED_METHODS,
          url: `${path}/`,
          config: { literalSegmentGuard: true },
          schema: { hide: true },
          handler: async () => {
            throw notFound('route');
          },
        });
        app.route({
          method: GUARDED_METHODS,
          url: `${path}/*`,
          config: { literalSegmentGuard: true },
          schema: { hide: true },
          handler: async (request) => {
            const deeper = methodsOfRoutesUnder(request.url.split('?')[0] ?? '/', path);
            throw deeper.length > 0 ? methodNotAllowed(deeper) : notFound('route');
          },
        });
      }
    });
  },
  { name: 'method-not-allowed' },
);
