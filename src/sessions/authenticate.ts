import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { toAppError } from '../http/error-handler.js';
import { AppError, invalidToken } from '../http/errors.js';
import { problemBody, PROBLEM_CONTENT_TYPE } from '../http/problem-reply.js';
import { spendAddressBudget, spendAnonymous } from '../http/security.js';
import { PUBLIC, type AccessRule } from './access-rule.js';
import { Access, type AdmissionHost, type AdmissionRequest } from './admission.js';
import { namesUser, type CallerKey } from './caller-query.js';
import { hashClientSecret, SECRET_PATTERN, SECRET_PREFIX } from './client-secrets.js';
import { touchSession } from './session-repository.js';
import { isClientToken, type AccessTokenClaims, type TokenIssuer } from './token-issuer.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The admission of the request's caller under its route's rule: the one way to the database. */
    access: Access;
  }
}

const BEARER = /^Bearer +([A-Za-z0-9\-_.~+/]+=*) *$/i;

const unauthenticated = () =>
  new AppError('unauthenticated', 'Send an access token as Authorization: Bearer <token>.', undefined, {
    'www-authenticate': 'Bearer',
  });

const refusedToken = () => new AppError('invalid_token', invalidToken().detail, undefined, { 'www-authenticate': 'Bearer error="invalid_token"' });

const scopeList = (scope: string) => scope.split(' ').filter(Boolean);

/**
 * Whom a verified access token names: a user in a session (through an app, within the scopes
 * its token carries, when it names one), or an API client with the scopes it was granted.
 */
function keyOfClaims(claims: AccessTokenClaims): CallerKey {
  if (isClientToken(claims)) return { kind: 'client-token', clientId: claims.client_id, scopes: scopeList(claims.scope), generation: claims.client_generation ?? 0 };
  if (claims.client_id !== undefined) return { kind: 'app-user', userId: claims.sub, sessionId: claims.sid, clientId: claims.client_id, scopes: scopeList(claims.scope ?? '') };
  return { kind: 'user', userId: claims.sub, sessionId: claims.sid };
}

/**
 * Notes an API client, and the secret it sent, as used (at most once a minute). The clients area
 * owns `api_clients` and supplies this; the app hands it to the sessions plugin.
 */
export type NoteClientUse = (db: Kysely<Database>, clientId: string, secretId: string | null) => Promise<void>;

/** Routes that must declare their rule: everything the API serves. */
const needsRule = (url: string) => url.startsWith('/api') || url.startsWith('/.well-known');

/**
 * Every route of the API declares `config.access`; a route that does not stops the start, so
 * no route can be added that the admission does not know.
 */
export function requireAccessRule(route: RouteOptions): void {
  if (route.config?.literalSegmentGuard || !needsRule(route.url)) return;
  if (!route.config?.access) throw new Error(`${[route.method].flat().join(',')} ${route.url} declares no access rule (config.access)`);
}

/**
 * The admission of every request to a route with a rule: a public route gets its `access` at
 * once; any other has its credentials read here, before the body is, so a request without valid
 * credentials is refused before anything else (401), spending its address's budget, and one with
 * them spends its caller's. Whether the caller may act is asked of the database with the
 * handler's first statement (admission.ts).
 */
export function admissionHooks(app: FastifyInstance, database: Kysely<Database>, issuer: TokenIssuer, noteClientUse: NoteClientUse) {
  // The admission's requests are this app's Fastify requests.
  const fastifyRequest = (request: AdmissionRequest) => request as FastifyRequest;
  const host: AdmissionHost = {
    spendAddressBudget: (request) => spendAddressBudget(app, fastifyRequest(request)),
    spendClientBudget: (clientId, limit) => app.rateLimiter.spend(`client:${clientId}`, limit ?? app.config.apiRateLimit),
    touchSession: (request, sessionId) => {
      touchSession(database, sessionId).catch((error: unknown) => fastifyRequest(request).log.warn({ err: error }, 'could not note the session as used'));
    },
    touchClient: (request, clientId, secretId) => {
      noteClientUse(database, clientId, secretId).catch((error: unknown) => fastifyRequest(request).log.warn({ err: error }, 'could not note the API client as used'));
    },
    countClientRequest: (clientId) => app.rateLimiter.count(`client:${clientId}`),
    defaultClientRateLimit: app.config.apiRateLimit,
    secondFactors: { requiredRoles: app.config.mfaRequiredRoles, stepUpMaxAgeSeconds: app.config.mfaStepUpMaxAgeSeconds },
  };

  /** The caller the bearer credential names: a user's or a client's access token, or a client's secret. */
  const keyOf = async (credential: string): Promise<CallerKey | undefined> => {
    if (credential.startsWith(SECRET_PREFIX)) return SECRET_PATTERN.test(credential) ? { kind: 'client-secret', secretHash: hashClientSecret(credential) } : undefined;
    const claims = await issuer.verifyAccessToken(credential);
    return claims && keyOfClaims(claims);
  };

  const onRequest = async (request: FastifyRequest): Promise<void> => {
    const rule: AccessRule | undefined = request.routeOptions.config.access;
    if (!rule) return;
    if (rule.public || (rule.tokenOptional && request.headers.authorization === undefined)) {
      request.access = new Access(database, PUBLIC, undefined, host, request);
      return;
    }
    let key: CallerKey | undefined;
    try {
      const header = request.headers.authorization;
      if (!header || !/^bearer /i.test(header)) throw unauthenticated();
      const credential = BEARER.exec(header)?.[1];
      key = credential ? await keyOf(credential) : undefined;
      if (!key) throw refusedToken();
    } catch (refusal) {
      await spendAnonymous(app, request);
      throw refusal;
    }
    request.rateLimitCounted = true;
    // A user's budget is spent now; a client's once the database has said which client it is.
    if (namesUser(key)) await app.rateLimiter.spend(`caller:${key.userId}`, app.config.apiRateLimit);
    const access = new Access(database, rule, key, host, request);
    request.access = access;
    // A 400 from the schema or a 404 from the handler must not speak before a refused caller's 401/403.
    request.checkBeforeError = () => (access.admitted ? Promise.resolve() : access.admit());
  };

  /**
   * A handler that answered without asking the admission has its caller checked now, before its
   * reply goes out: a refused caller gets the refusal instead. No handler can skip the check.
   */
  const onSend = (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: Error | null, payload?: unknown) => void) => {
    const access = request.access as Access | undefined;
    if (!access || access.admitted || reply.statusCode >= 400) return done(null, payload);
    access.admit().then(
      () => done(null, payload),
      (refusal: unknown) => {
        const error = toAppError(refusal as never, request.id);
        if (error.headers) reply.headers(error.headers);
        reply.code(error.statusCode).type(PROBLEM_CONTENT_TYPE).removeHeader('etag').removeHeader('location');
        done(null, JSON.stringify(problemBody(error)));
      },
    );
  };

  return { onRequest, onSend };
}
