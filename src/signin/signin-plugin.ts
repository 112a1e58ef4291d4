import type { FastifyInstance } from 'fastify';
import { PUBLIC } from '../sessions/access-rule.js';
import type { TokenIssuer } from '../sessions/token-issuer.js';
import type { IdTokenSigner } from '../sessions/id-token-signer.js';
import { authorizeRoutes } from './authorize-routes.js';
import { forgotPasswordRoutes } from './forgot-password-routes.js';
import { logoutRoutes } from './logout-routes.js';
import { PAGE_STYLES } from './page-styles.js';
import { passkeyScript } from './passkey-script.js';

/**
 * The hosted sign-in pages of the authorization server (API.md section 18): /oauth/authorize,
 * /oauth/forgot-password, /oauth/logout, the stylesheet their pages load and the sign-in page's passkey script. Registered only while the authorization server is on (an https
 * issuer, or http on a loopback host); otherwise /oauth/… is the 404 of any unknown path. Its own
 * context: its form parser and its error handler (an HTML page, never problem+json) stay here.
 */
export async function signinPlugin(app: FastifyInstance, options: { tokenIssuer: TokenIssuer; idTokens: IdTokenSigner }): Promise<void> {
  if (!app.config.authorizationServer) return;
  const script = passkeyScript();
  if (script === undefined) app.log.warn('@simplewebauthn/browser is not installed: the hosted sign-in page offers no passkey');
  await app.register(authorizeRoutes, { tokenIssuer: options.tokenIssuer, passkeys: script !== undefined });
  await app.register(forgotPasswordRoutes);
  await app.register(logoutRoutes, { idTokens: options.idTokens });
  app.get('/oauth/assets/pages.css', { config: { access: PUBLIC }, schema: { hide: true } }, async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=3600').type('text/css; charset=utf-8').send(PAGE_STYLES),
  );
  if (script !== undefined) {
    app.get('/oauth/assets/passkey.js', { config: { access: PUBLIC }, schema: { hide: true } }, async (_request, reply) =>
      reply.header('cache-control', 'public, max-age=3600').type('text/javascript; charset=utf-8').send(script),
    );
  }
}
