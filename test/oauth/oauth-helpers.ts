import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { Config } from '../../src/config.js';
import type { Database } from '../../src/db/tables.js';
import { createTokenIssuer } from '../../src/sessions/token-issuer.js';
import { PASSWORD_ONLY, startSession, type TokenPair } from '../../src/sessions/token-pairs.js';
import type { Session } from '../helpers/test-app.js';

export { basic, bearer } from '../helpers/code-grant.js';

export const ALL_APP_SCOPES = ['openid', 'profile', 'email', 'phone', 'offline_access', 'account', 'variants:read'];

export interface RegisteredApp {
  id: string;
  /** A confidential app's or a service client's secret; undefined for a public app. */
  secret: string | undefined;
}

/** Registers an app (or a service client) through the admin API, as an admin would. */
export async function registerClient(app: FastifyInstance, admin: Session, type: 'confidential' | 'public' | 'service', scopes = type === 'service' ? ['variants:read'] : ALL_APP_SCOPES, name = `App ${type}`): Promise<RegisteredApp> {
  const body = type === 'service' ? { name, scopes } : { name, type, redirect_uris: ['https://shop.example.com/callback'], scopes, logo_uri: 'https://shop.example.com/logo.png' };
  const reply = await app.inject({ method: 'POST', url: '/api/clients', headers: admin.auth, payload: body });
  assert.equal(reply.statusCode, 201, reply.body);
  return { id: reply.json().id, secret: reply.json().secret };
}

/** The session an app starts for the user once the user signed in and granted `scopes`: what the code exchange does. */
export function appSession(db: Kysely<Database>, config: Config, user: { id: string }, clientId: string, scopes: string[]): Promise<TokenPair> {
  return startSession(db, createTokenIssuer(config, undefined), user.id, { userAgent: 'test', ip: '127.0.0.1' }, PASSWORD_ONLY, { clientId, scopes });
}

export const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { sid: string; sub: string; exp: number; iat: number; client_id?: string; scope?: string };

/** A form post, as OAuth clients send it. */
export function postForm(app: FastifyInstance, url: string, form: Record<string, string>, headers: Record<string, string> = {}) {
  return app.inject({ method: 'POST', url, headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, payload: new URLSearchParams(form).toString() });
}
