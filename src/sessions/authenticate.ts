import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database, Role } from '../db/tables.js';
import { AppError, accountSuspended, forbidden, invalidToken } from '../http/errors.js';
import { findCaller, type Caller } from './caller-repository.js';
import type { TokenIssuer } from './token-issuer.js';

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

const unauthenticated = () =>
  new AppError('unauthenticated', 'Send an access token as Authorization: Bearer <token>.', undefined, {
    'www-authenticate': 'Bearer',
  });

function withChallenge(error: AppError): AppError {
  return new AppError(error.code, error.detail, undefined, { 'www-authenticate': 'Bearer error="invalid_token"' });
}

/**
 * The hook that authenticates every request of a scope. The caller's role, status and
 * session version are read from the database on every request, so a role change, suspension,
 * deletion or password change applies to the very next request on any instance.
 */
export function authenticationHook(db: Kysely<Database>, issuer: TokenIssuer): onRequestAsyncHookHandler {
  return async (request: FastifyRequest) => {
    const header = request.headers.authorization;
    if (!header || !/^bearer /i.test(header)) throw unauthenticated();
    const match = BEARER.exec(header);
    const claims = match?.[1] ? issuer.verifyAccessToken(match[1]) : undefined;
    if (!claims) throw withChallenge(invalidToken());
    const caller = await findCaller(db, claims.sub);
    if (!caller || caller.session_version !== claims.sv) throw withChallenge(invalidToken());
    if (caller.status === 'suspended') throw accountSuspended();
    const roles = request.routeOptions.config.roles;
    if (roles && !roles.includes(caller.role)) throw forbidden();
    request.caller = caller;
  };
}
