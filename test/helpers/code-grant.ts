import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { Config } from '../../src/config.js';
import type { Database } from '../../src/db/tables.js';
import { issueAuthorizationCode } from '../../src/oauth/authorization-codes.js';
import { createTokenIssuer } from '../../src/sessions/token-issuer.js';
import { openSession, PASSWORD_ONLY } from '../../src/sessions/token-pairs.js';
import type { Session } from './test-app.js';
import { findConsent, upsertConsent } from '../../src/oauth/consent-repository.js';

export const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
export const basic = (id: string, secret: string) => ({ authorization: `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}` });
export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

export interface RegisteredApp {
  id: string;
  /** A confidential app's first secret; a public app has none. */
  secret: string | undefined;
  redirectUri: string;
}

/** An app registered through the API, as an admin does (API.md section 18, "Apps"). */
export async function registerApp(
  app: FastifyInstance,
  admin: Session,
  options: { type?: 'confidential' | 'public'; alg?: 'RS256' | 'EdDSA'; scopes?: string[]; redirectUri?: string } = {},
): Promise<RegisteredApp> {
  const redirectUri = options.redirectUri ?? 'https://shop.example.com/callback';
  const reply = await app.inject({
    method: 'POST',
    url: '/api/clients',
    headers: admin.auth,
    payload: {
      name: 'Storefront',
      type: options.type ?? 'confidential',
      redirect_uris: [redirectUri],
      scopes: options.scopes ?? ['openid', 'profile', 'email', 'phone', 'offline_access', 'account'],
      ...(options.alg ? { id_token_signed_response_alg: options.alg } : {}),
    },
  });
  assert.equal(reply.statusCode, 201, reply.body);
  const body = reply.json();
  return { id: body.id, secret: body.secret, redirectUri };
}

/** A sign-in session of the hosted pages for the user, as the sign-in pages would start it. */
export async function signInSession(db: Kysely<Database>, config: Config, userId: string): Promise<string> {
  const issuer = createTokenIssuer(config, undefined);
  const browserSecretHash = createHash('sha256').update(randomBytes(32)).digest('hex');
  const { session } = await openSession(db, issuer, userId, { userAgent: 'a browser', ip: '127.0.0.1' }, PASSWORD_ONLY, undefined, { browserSecretHash, lifetimeSeconds: 3600 });
  return session.id;
}

export const newCodeVerifier = () => randomBytes(32).toString('base64url');
export const challengeOf = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

export interface IssuedCode {
  code: string;
  verifier: string;
  nonce: string;
  signinSessionId: string;
  authTime: Date;
}

/** A code as /oauth/authorize issues it once the user signed in and granted `scopes` (recorded as a consent unless `consent: false`). */
export async function issueCode(
  db: Kysely<Database>,
  config: Config,
  options: { app: RegisteredApp; userId: string; scopes: string[]; signinSessionId?: string; nonce?: string | null; amr?: string[]; authTime?: Date; consent?: boolean },
): Promise<IssuedCode> {
  // The consent page's grant, which a third-party app's code needs behind it (a first-party app's ignores it).
  if (options.consent !== false) {
    const earlier = (await findConsent(db, options.userId, options.app.id))?.scopes ?? [];
    await upsertConsent(db, { user_id: options.userId, client_id: options.app.id, scopes: [...new Set([...earlier, ...options.scopes])], granted_at: new Date() });
  }
  const verifier = newCodeVerifier();
  const nonce = options.nonce === undefined ? randomBytes(12).toString('base64url') : options.nonce;
  const signinSessionId = options.signinSessionId ?? (await signInSession(db, config, options.userId));
  // Whole seconds, as the ID token's auth_time carries it.
  const authTime = options.authTime ?? new Date(Math.floor(Date.now() / 1000) * 1000 - 5000);
  const code = await issueAuthorizationCode(db, {
    clientId: options.app.id,
    userId: options.userId,
    redirectUri: options.app.redirectUri,
    codeChallenge: challengeOf(verifier),
    nonce,
    scopes: options.scopes,
    signinSessionId,
    authTime,
    amr: options.amr ?? ['pwd'],
  });
  return { code, verifier, nonce: nonce ?? '', signinSessionId, authTime };
}

/** A form body, each value encoded. */
export const form = (fields: Record<string, string | undefined>) =>
  Object.entries(fields)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([name, value]) => `${name}=${encodeURIComponent(value)}`)
    .join('&');

/** The parts of a JWT, decoded, without checking anything. */
export function jwtParts(token: string): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  const [header, payload] = token.split('.');
  return { header: JSON.parse(Buffer.from(header!, 'base64url').toString()), payload: JSON.parse(Buffer.from(payload!, 'base64url').toString()) };
}
