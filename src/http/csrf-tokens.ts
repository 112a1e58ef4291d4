import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { BrowserCookies } from './browser-cookies.js';

const CSRF_COOKIE = 'shop_csrf';
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** A browser keeps its token for a year; a new one would only fail forms already open. */
const CSRF_COOKIE_MAX_AGE_SECONDS = 365 * 24 * 3600;

/**
 * What the database keeps of a browser's token to bind a step to that browser (a pending
 * create-account, a sign-in at another provider): its SHA-256, so a database reader cannot post
 * as the browser.
 */
export const hashBrowserToken = (token: string): string => createHash('sha256').update(token).digest('hex');

/**
 * CSRF tokens bound to the browser (API.md section 18): a random token in a `__Host-` cookie,
 * which every form repeats in `csrf_token`; a post counts only when the two are equal. This is
 * OWASP's double-submit cookie. OWASP prefers signing the token with a server key, against an
 * attacker who can write the victim's cookie from a sibling subdomain or over plain http; the
 * `__Host-` prefix already makes such a write impossible (Secure, no Domain), so no server key
 * is kept, and every instance checks every post with nothing but the request. Fetch Metadata is
 * checked too: a browser that says a post is cross-site is refused whatever the token.
 */
export class CsrfTokens {
  constructor(private readonly cookies: BrowserCookies) {}

  /** The browser's token for the forms of the page being rendered, set in a cookie when it has none. */
  tokenFor(request: FastifyRequest, reply: FastifyReply): string {
    const existing = this.cookies.read(request, CSRF_COOKIE);
    if (existing !== undefined && TOKEN_PATTERN.test(existing)) return existing;
    const token = randomBytes(32).toString('base64url');
    this.cookies.write(reply, CSRF_COOKIE, token, CSRF_COOKIE_MAX_AGE_SECONDS);
    return token;
  }

  /** The browser's token as its cookie holds it (a GET that must know the browser: a provider's callback), when it has a well-formed one. */
  browserToken(request: FastifyRequest): string | undefined {
    const token = this.cookies.read(request, CSRF_COOKIE);
    return token !== undefined && TOKEN_PATTERN.test(token) ? token : undefined;
  }

  /** Whether a form post carries the token of the browser that sent it, from a page of this site. */
  postIsGenuine(request: FastifyRequest, formToken: unknown): boolean {
    if (request.headers['sec-fetch-site'] === 'cross-site') return false;
    const cookieToken = this.cookies.read(request, CSRF_COOKIE);
    if (cookieToken === undefined || typeof formToken !== 'string' || !TOKEN_PATTERN.test(cookieToken) || !TOKEN_PATTERN.test(formToken)) return false;
    return timingSafeEqual(Buffer.from(cookieToken), Buffer.from(formToken));
  }
}
