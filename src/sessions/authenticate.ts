import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { Role } from '../db/tables.js';
import { AppError, accountSuspended, forbidden, invalidToken } from '../http/errors.js';
import { spendAnonymous } from '../http/security.js';
import { findCallerWithSession, type Caller } from './caller-repository.js';
import { touchSession } from './session-repository.js';
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
export function authenticationHook(app: FastifyInstance, issuer: TokenIssuer): onRequestAsyncHookHandler {
  const identify = async (request: FastifyRequest): Promise<Caller> => {
    const header = request.headers.authorization;
    if (!header || !/^bearer /i.test(header)) throw unauthenticated();
    const match = BEARER.exec(header);
    const claims = match?.[1] ? await issuer.verifyAccessToken(match[1]) : undefined;
    if (!claims) throw withChallenge(invalidToken());
    const caller = await findCallerWithSession(app.db, claims.sub, claims.sid);
    if (!caller) throw withChallenge(invalidToken());
    // Suspension ends every session; while it lasts the answer is that the account is suspended.
    if (caller.status === 'suspended') throw accountSuspended();
    if (!caller.session_open) throw withChallenge(invalidToken());
    if (!caller.session_last_used_at || Date.now() - caller.session_last_used_at.getTime() > 60_000) {
      touchSession(app.db, caller.session_id).catch((error: unknown) => request.log.warn({ err: error }, 'could not note the session as used'));
    }
    return caller;
  };
  return async (request: FastifyRequest) => {
    let caller: Caller;
    try {
      caller = await identify(request);
    } catch (refusal) {
      // A request whose token is refused spends its address's budget, like one without a token.
      await spendAnonymous(app, request);
      throw refusal;
    }
    request.rateLimitCounted = true;
    await app.rateLimiter.spend(`caller:${caller.id}`, app.config.apiRateLimit);
    const roles = request.routeOptions.config.roles;
    if (roles && !roles.includes(caller.role)) throw forbidden();
    request.caller = caller;
  };
}
