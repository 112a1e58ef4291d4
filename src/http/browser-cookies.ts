import type { FastifyReply, FastifyRequest } from 'fastify';
import { isLoopbackHttp } from './loopback-hosts.js';

/**
 * The hosted pages' cookies (API.md section 18): `__Host-` prefixed, Secure, host-only,
 * `Path=/`, HttpOnly and SameSite=Lax, so no other host, subdomain or script can write or read
 * them. Only when PUBLIC_URL is plain http on a loopback host (a developer's machine, where a
 * browser refuses Secure cookies) are they sent without Secure and the prefix.
 */
export class BrowserCookies {
  private readonly secure: boolean;

  constructor(publicUrl: string) {
    this.secure = !isLoopbackHttp(new URL(publicUrl));
  }

  /** The name a cookie has on this deployment: `shop_sid` is `__Host-shop_sid` over https. */
  nameOf(baseName: string): string {
    return this.secure ? `__Host-${baseName}` : baseName;
  }

  /** The cookie's value in the request, the first if a browser sent it twice; undefined if absent. */
  read(request: FastifyRequest, baseName: string): string | undefined {
    const name = this.nameOf(baseName);
    for (const pair of (request.headers.cookie ?? '').split(';')) {
      const separator = pair.indexOf('=');
      if (separator !== -1 && pair.slice(0, separator).trim() === name) return pair.slice(separator + 1).trim();
    }
    return undefined;
  }

  /** Sets the cookie for `maxAgeSeconds` (0 deletes it); its value must be cookie-safe (base64url, dots). */
  write(reply: FastifyReply, baseName: string, value: string, maxAgeSeconds: number): void {
    const attributes = [`${this.nameOf(baseName)}=${value}`, 'Path=/', `Max-Age=${maxAgeSeconds}`, 'HttpOnly', 'SameSite=Lax'];
    if (this.secure) attributes.push('Secure');
    // Fastify adds each set-cookie to the ones already set, so the pages' cookies do not replace each other.
    reply.header('set-cookie', attributes.join('; '));
  }
}
