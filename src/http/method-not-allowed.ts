import type { FastifyInstance } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { AppError, notFound } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set on the routes that only keep a literal segment from being read as an {id}. */
    literalSegmentGuard?: boolean;
  }
}

const GUARDED_METHODS: HTTPMethod[] = ['GET', 'PUT', 'POST', 'DELETE', 'PATCH'];

const methodNotAllowed = (allowed: string[]) =>
  new AppError(405, 'method_not_allowed', `Use one of: ${allowed.join(', ')}.`, undefined, { allow: allowed.join(', ') });

/**
 * Fastify answers an unknown method with 404. To answer 405 with `Allow`, every route is
 * mirrored into a second router that is asked, on a miss, which methods the path has.
 */
export function registerNotFoundHandler(app: FastifyInstance, maxParamLength: number) {
  const mirror = FindMyWay({ maxParamLength });
  const methods = new Set<HTTPMethod>();
  app.addHook('onRoute', (route) => {
    if (route.config?.literalSegmentGuard) return;
    for (const method of [route.method].flat() as HTTPMethod[]) {
      methods.add(method);
      mirror.on(method, route.url, () => {}, { url: route.url });
    }
  });
  const allowedMethods = (path: string, exactPattern?: string) =>
    [...methods].filter((method) => {
      const found = mirror.find(method, path);
      return found !== null && (exactPattern === undefined || (found.store as { url: string }).url === exactPattern);
    });

  app.setNotFoundHandler(async (request) => {
    const allowed = allowedMethods(request.url.split('?')[0] ?? '/');
    if (allowed.length > 0) throw methodNotAllowed(allowed);
    throw notFound('route');
  });

  /**
   * Keeps literal segments (`/api/users/profile`, `/api/variants/sku`…) from falling through
   * to an `/:id` route on the methods they lack: those get 405 (or 404 when the path has no
   * method at all) instead of a 400 for a malformed id. Call after every route is registered.
   */
  return function guardLiteralSegments(paths: string[]): void {
    for (const path of paths) {
      const allowed = allowedMethods(path, path);
      const missing = GUARDED_METHODS.filter((method) => !allowed.includes(method));
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
  };
}
