import type { FastifyInstance, FastifyRequest } from 'fastify';
import { verifyAccessToken } from '../auth/access-tokens.js';
import type { Role } from '../db/tables.js';
import { findCaller, type Caller } from '../users/user-repository.js';
import { AppError, accountSuspended, forbidden, invalidToken } from './errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller;
  }
  interface FastifyContextConfig {
    /** Roles allowed on the route; unset means any authenticated caller. */
    roles?: readonly Role[];
  }
}

const BEARER = /^Bearer +([A-Za-z0-9\-_.~+/]+=*) *$/i;

/**
 * Authenticates every request of the scope it is added to. The caller's role, status and
 * session version are read from the database on every request, so a role change, suspension,
 * deletion or password change applies to the very next request on any instance.
 */
export function addAuthentication(app: FastifyInstance): void {
  app.decorateRequest('caller', undefined as unknown as Caller);
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const header = request.headers.authorization;
    if (!header || !/^bearer /i.test(header)) {
      throw new AppError(401, 'unauthenticated', 'Send an access token as Authorization: Bearer <token>.', undefined, {
        'www-authenticate': 'Bearer',
      });
    }
    const match = BEARER.exec(header);
    const claims = match?.[1] ? verifyAccessToken(app, match[1]) : undefined;
    if (!claims) throw withChallenge(invalidToken());
    const caller = await findCaller(app.db, claims.sub);
    if (!caller || caller.session_version !== claims.sv) throw withChallenge(invalidToken());
    if (caller.status === 'suspended') throw accountSuspended();
    const roles = request.routeOptions.config.roles;
    if (roles && !roles.includes(caller.role)) throw forbidden();
    request.caller = caller;
  });
}

function withChallenge(error: AppError): AppError {
  return new AppError(error.statusCode, error.code, error.detail, undefined, {
    'www-authenticate': 'Bearer error="invalid_token"',
  });
}
