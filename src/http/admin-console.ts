import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { setPageHeaders } from './security.js';

const CONSOLE_DIRECTORY = fileURLToPath(new URL('../../admin/dist', import.meta.url));
const CONSOLE_CSP = "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/**
 * Serves the built admin console at /admin. It is a static page over the public API; when it
 * has not been built (`npm run build`), the service runs without it.
 */
export async function registerAdminConsole(app: FastifyInstance): Promise<void> {
  if (!existsSync(CONSOLE_DIRECTORY)) {
    app.log.warn('the admin console is not built; run `npm run build` to serve it at /admin');
    return;
  }
  await app.register(async (scope) => {
    scope.addHook('onSend', async (_request, reply) => {
      setPageHeaders(reply, CONSOLE_CSP);
    });
    await scope.register(fastifyStatic, { root: CONSOLE_DIRECTORY, prefix: '/admin/', decorateReply: false });
    scope.get('/admin', { schema: { hide: true } }, (_request, reply) => reply.redirect('/admin/'));
  });
}
