import fastifyCors from '@fastify/cors';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import helmet from 'helmet';
import fastifyPlugin from 'fastify-plugin';
import type { Config } from '../config.js';
import { addressKey } from './client-address.js';
import { rateLimitPlugin } from './rate-limit.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Health probes and the metrics scrape are never rate-limited. */
    unlimited?: boolean;
  }
  interface FastifyRequest {
    /** Set once the request has spent from some rate-limit budget. */
    rateLimitCounted?: boolean;
  }
}

/** Spends one request from the client address's budget (requests without a valid token). */
export async function spendAnonymous(app: FastifyInstance, request: FastifyRequest): Promise<void> {
  if (request.rateLimitCounted || request.routeOptions.config.unlimited) return;
  request.rateLimitCounted = true;
  await spendAddressBudget(app, request);
}

/**
 * Spends one request from the address's budget whatever else it spent: credentials the database
 * refused (an unknown secret, an ended session) cost the address like a bad token, so guessing
 * secrets is as slow as guessing tokens.
 */
export async function spendAddressBudget(app: FastifyInstance, request: FastifyRequest): Promise<void> {
  request.rateLimitCounted = true;
  await app.rateLimiter.spend(`ip:${addressKey(request.ip)}`, app.config.apiRateLimit);
}

/**
 * The headers Helmet sets on an HTML page, read once: with no CSP nonces they are the same on
 * every reply, and running Helmet's middleware (as @fastify/helmet does, rebuilding it for each
 * request) showed in the profile.
 */
function helmetHeaders(options: Parameters<typeof helmet>[0]): Record<string, string> {
  const headers: Record<string, string> = {};
  const response = {
    setHeader: (name: string, value: string | number) => void (headers[name.toLowerCase()] = String(value)),
    removeHeader: (name: string) => void delete headers[name.toLowerCase()],
  };
  helmet(options)({} as IncomingMessage, response as unknown as ServerResponse, () => {});
  return headers;
}

/** Helmet's headers for a page a browser renders, its policy left to each page. */
const PAGE_HEADERS = helmetHeaders({ contentSecurityPolicy: false });

/**
 * The headers of every API reply: the OWASP REST Security Cheat Sheet's for API replies and for
 * replies a browser might render anyway (a policy that loads nothing and allows no framing, no
 * referrer), HSTS, and the cross-origin resource and policy-file refusals Helmet sends. Helmet's
 * others (DNS prefetching, IE's download prompt, the XSS auditor, the opener policy,
 * origin-keyed agent clusters) govern pages a browser renders, which a reply with `nosniff` and
 * a JSON or CSV type never is; each header costs a read about 1% of its instructions
 * (bench/README.md), so the pages get them (setPageHeaders) and the API does not.
 */
export const API_HEADERS: Record<string, string> = {
  'strict-transport-security': PAGE_HEADERS['strict-transport-security']!,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
  'x-permitted-cross-domain-policies': 'none',
};

/**
 * Makes a reply an HTML page's (the console's, the API reference's): Helmet's page headers, the
 * page's own Content-Security-Policy, and X-Frame-Options saying what the policy's
 * frame-ancestors says, for browsers that read only the older header.
 */
export function setPageHeaders(reply: FastifyReply, contentSecurityPolicy: string): void {
  const framing = /frame-ancestors 'none'/.test(contentSecurityPolicy) ? 'DENY' : 'SAMEORIGIN';
  reply.headers(PAGE_HEADERS).header('content-security-policy', contentSecurityPolicy).header('x-frame-options', framing);
}

/** Spends the address's budget when `spend` says so, without a promise when it does not. */
function spendingAnonymous(app: FastifyInstance, spend: (request: FastifyRequest) => boolean) {
  return (request: FastifyRequest, _reply: unknown, done: (error?: Error) => void) => {
    if (!spend(request)) return done();
    spendAnonymous(app, request).then(() => done(), done);
  };
}

/**
 * Security headers, CORS when origins are configured, and the per-address budget: every
 * request that does not spend an authenticated caller's budget (see the authenticate hook)
 * spends its client address's, whatever route it reaches, unknown ones included.
 */
export const securityPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { config: Config }) => {
    const { config } = options;
    app.addHook('onRequest', (_request, reply, done) => {
      reply.headers(API_HEADERS);
      done();
    });
    if (config.corsOrigins) {
      await app.register(fastifyCors, { origin: config.corsOrigins, exposedHeaders: ['etag', 'location', 'x-request-id', 'retry-after'] });
    }
    await app.register(rateLimitPlugin, { redisUrl: config.redisUrl });
    app.addHook('onRequest', spendingAnonymous(app, (request) => !request.headers.authorization || request.is404));
    // A request with a token that no authenticate hook looked at (auth routes, unknown paths).
    app.addHook('preHandler', spendingAnonymous(app, (request) => !request.rateLimitCounted));
  },
  { name: 'security' },
);
