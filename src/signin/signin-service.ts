import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { issueAuthorizationCode } from '../oauth/authorization-codes.js';
import { consentCovers } from '../oauth/consent-service.js';
import { liveSigninSession, type LiveSigninSession } from '../sessions/signin-sessions.js';
import type { AuthorizationRequest } from './authorization-request.js';

/** The sign-in session's cookie (`__Host-shop_sid` over https, API.md section 18). */
export const SIGNIN_COOKIE = 'shop_sid';
const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** The cookie's secret is stored only as its SHA-256: 256 random bits need no slow hash. */
export const hashBrowserSecret = (secret: string) => createHash('sha256').update(secret).digest('hex');

/** A new sign-in session's browser secret (32 random bytes, base64url) and the hash its session row keeps. */
export function newBrowserSecret(): { secret: string; hash: string } {
  const secret = randomBytes(32).toString('base64url');
  return { secret, hash: hashBrowserSecret(secret) };
}

/** The browser's live sign-in session, read from the database on every request; undefined without a cookie or when it no longer counts. */
export async function signinSessionOf(db: Kysely<Database>, secret: string | undefined): Promise<LiveSigninSession | undefined> {
  if (secret === undefined || !SECRET_PATTERN.test(secret)) return undefined;
  return liveSigninSession(db, hashBrowserSecret(secret));
}

/**
 * Whether the person must sign in before the app gets a code (the checks of API.md section 18,
 * each one reason): no live sign-in session; `prompt=login`; or `max_age` seconds passed since
 * the sign-in. A sign-in made by this very request satisfies all three.
 */
export function mustSignIn(request: AuthorizationRequest, session: LiveSigninSession | undefined, signedInNow: boolean): boolean {
  if (session === undefined) return true;
  if (signedInNow) return false;
  if (request.prompts.includes('login')) return true;
  return request.maxAgeSeconds !== undefined && Date.now() - session.auth_time.getTime() > request.maxAgeSeconds * 1000;
}

/** How long after a sign-in on the pages its consent page may still be answered, where the request asked for a fresh sign-in. */
export const CONSENT_AFTER_SIGN_IN_MS = 10 * 60 * 1000;

/**
 * Whether an `allow` post may stand on the sign-in session. The consent page is shown only after
 * the checks of `mustSignIn`, but the post itself carries nothing the server showed, so a request
 * that asked for a fresh sign-in (`prompt=login`, `max_age`) is held to it here too: the sign-in
 * must be recent (within `max_age`, or the few minutes a person takes on the consent page after
 * signing in), else the sign-in page comes again.
 */
export function consentMayStand(request: AuthorizationRequest, session: LiveSigninSession): boolean {
  if (!request.prompts.includes('login') && request.maxAgeSeconds === undefined) return true;
  const window = Math.max(CONSENT_AFTER_SIGN_IN_MS, (request.maxAgeSeconds ?? 0) * 1000);
  return Date.now() - session.auth_time.getTime() <= window;
}

/**
 * Whether the consent page must be shown: never for a first-party app; for a third-party one
 * when `prompt=consent` asks (unless the person just answered it) or the consent on record does
 * not cover every scope asked for.
 */
export async function mustConsent(db: Kysely<Database>, request: AuthorizationRequest, userId: string): Promise<boolean> {
  if (request.client.first_party) return false;
  if (request.prompts.includes('consent')) return true;
  return !(await consentCovers(db, userId, request.client.id, request.scopes));
}

/** The code of a granted request, bound to the app, its redirect URI, the PKCE challenge, the nonce and the sign-in. */
export function codeFor(db: Kysely<Database>, request: AuthorizationRequest, session: LiveSigninSession): Promise<string> {
  return issueAuthorizationCode(db, {
    clientId: request.client.id,
    userId: session.user_id,
    redirectUri: request.redirectUri,
    codeChallenge: request.codeChallenge,
    nonce: request.nonce,
    scopes: request.scopes,
    signinSessionId: session.id,
    authTime: session.auth_time,
    amr: session.amr,
  });
}
