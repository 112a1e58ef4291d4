import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler, RouteOptions } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database, Role } from '../db/tables.js';
import { AppError, accountSuspended, forbidden, invalidToken } from '../http/errors.js';
import { spendAnonymous } from '../http/security.js';
import { CallerCheck } from './caller-check.js';
import type { Caller, CallerWithSession } from './caller-repository.js';
import { touchSession } from './session-repository.js';
import type { TokenIssuer } from './token-issuer.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who makes the request, as the database said; on a `checksCallerWithData` route, set by its first read. */
    caller: Caller;
    /** Whom the access token names: its subject and session, before the database is asked. */
    identity: { userId: string; sessionId: string };
    /**
     * The database for the route's handler. On a `checksCallerWithData` route its first SELECT
     * carries the caller check (see CallerCheck); elsewhere it is the app's own.
     */
    db: Kysely<Database>;
  }
  interface FastifyContextConfig {
    /** Roles allowed on the route; unset means any authenticated caller. */
    roles?: readonly Role[];
    /**
     * The route's first query through `request.db` checks the caller in the same statement: a
     * read's first SELECT, a write's first statement in its transaction (a SELECT: the row it
     * locks) or the read before it. Such a handler makes its first query through `request.db`,
     * and reads nothing of `request.caller` before it; a statement that is not a SELECT cannot
     * go first.
     */
    checksCallerWithData?: boolean;
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
 * The rules every authenticated request goes through, in one place, applied to the caller as
 * the database returned it (on its own or with the request's data): a deleted user or an ended
 * session is 401, a suspended user 403 (suspension ends every session; while it lasts the
 * answer says so), a role the route does not allow 403.
 */
function admission(app: FastifyInstance, request: FastifyRequest, roles: readonly Role[] | undefined) {
  return async (caller: CallerWithSession | undefined): Promise<Caller> => {
    try {
      if (!caller) throw withChallenge(invalidToken());
      if (caller.status === 'suspended') throw accountSuspended();
      if (!caller.session_open) throw withChallenge(invalidToken());
    } catch (refusal) {
      // A request whose token is refused spends its address's budget, like one without a token.
      await spendAnonymous(app, request);
      throw refusal;
    }
    if (roles && !roles.includes(caller.role)) throw forbidden();
    if (caller.session_stale) {
      touchSession(app.db, caller.session_id).catch((error: unknown) => request.log.warn({ err: error }, 'could not note the session as used'));
    }
    request.caller = caller;
    return caller;
  };
}

/**
 * The hook that authenticates every request of a scope. The caller's role, status and session
 * are read from the database on every request, so a role change, suspension, deletion or
 * sign-out applies to the very next request on any instance. On routes marked
 * `checksCallerWithData` (every authenticated route but a webhook create) the check travels
 * with the handler's first query (no extra round trip), and the handler is held to it
 * (`holdToCallerCheck`); elsewhere it is a statement of its own before the handler.
 */
export function authenticationHook(app: FastifyInstance, issuer: TokenIssuer): onRequestAsyncHookHandler {
  return async (request: FastifyRequest) => {
    const header = request.headers.authorization;
    let claims: { sub: string; sid: string } | undefined;
    try {
      if (!header || !/^bearer /i.test(header)) throw unauthenticated();
      const match = BEARER.exec(header);
      claims = match?.[1] ? await issuer.verifyAccessToken(match[1]) : undefined;
      if (!claims) throw withChallenge(invalidToken());
    } catch (refusal) {
      await spendAnonymous(app, request);
      throw refusal;
    }
    request.rateLimitCounted = true;
    await app.rateLimiter.spend(`caller:${claims.sub}`, app.config.apiRateLimit);
    request.identity = { userId: claims.sub, sessionId: claims.sid };
    // Read once: Fastify builds routeOptions anew on every access.
    const { roles, checksCallerWithData } = request.routeOptions.config;
    const check = new CallerCheck(app.db, request.identity, roles, admission(app, request, roles));
    checks.set(request, check);
    if (checksCallerWithData) {
      request.db = app.db.withPlugin(check);
      // A 400 from the schema or a 404 from the handler must not speak before a refused caller's 401/403.
      request.checkBeforeError = () => check.ensure();
      return;
    }
    await check.ensure();
    request.db = app.db;
  };
}

const checks = new WeakMap<FastifyRequest, CallerCheck>();

/**
 * Route option hook: a `checksCallerWithData` handler that answered without a query through
 * `request.db` gets the caller checked on its own before anything is sent, so no handler can
 * skip the check. (A failing request is held to it by `checkBeforeError`.)
 */
export function holdToCallerCheck(route: RouteOptions): void {
  if (!route.config?.checksCallerWithData) return;
  const handler = route.handler;
  route.handler = async function checkedHandler(this: FastifyInstance, request, reply) {
    const result: unknown = await handler.call(this, request, reply);
    await checks.get(request)?.ensure();
    return result;
  };
}
