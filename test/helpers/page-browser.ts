import { createHash, randomBytes } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

/** A PKCE pair (RFC 7636): the verifier the app keeps and the S256 challenge it sends. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** The form's CSRF token on a page, as a script or a password manager reads it. */
export function csrfTokenOf(html: string): string {
  const token = /name="csrf_token" value="([^"]+)"/.exec(html)?.[1];
  if (!token) throw new Error(`no csrf_token on the page: ${html.slice(0, 300)}`);
  return token;
}

/** The action of the page's form, the URL its posts go to (HTML-unescaped). */
export function formActionOf(html: string): string {
  const action = /<form[^>]* action="([^"]+)"/.exec(html)?.[1];
  if (!action) throw new Error('no form on the page');
  return action.replace(/&amp;/g, '&');
}

/**
 * A browser over the app's HTTP interface: it keeps the cookies the pages set (by name, as a
 * browser does for one host) and sends them back, and follows nothing on its own.
 */
export class PageBrowser {
  readonly cookies = new Map<string, { value: string; attributes: string }>();

  constructor(private readonly app: FastifyInstance) {}

  private cookieHeader(): Record<string, string> {
    const live = [...this.cookies].filter(([, cookie]) => cookie.value !== '');
    return live.length === 0 ? {} : { cookie: live.map(([name, cookie]) => `${name}=${cookie.value}`).join('; ') };
  }

  private keep(response: LightMyRequestResponse): LightMyRequestResponse {
    const header = response.headers['set-cookie'];
    for (const line of header === undefined ? [] : Array.isArray(header) ? header : [header]) {
      const [pair = '', ...attributes] = line.split(';');
      const separator = pair.indexOf('=');
      this.cookies.set(pair.slice(0, separator).trim(), { value: pair.slice(separator + 1).trim(), attributes: attributes.join(';').trim() });
    }
    return response;
  }

  async get(url: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    return this.keep(await this.app.inject({ method: 'GET', url, headers: { ...this.cookieHeader(), ...headers } }));
  }

  async post(url: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    return this.keep(
      await this.app.inject({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...this.cookieHeader(), ...headers },
        payload: new URLSearchParams(fields).toString(),
      }),
    );
  }

  /** An API call the page's script would make (the console's fetch): JSON, with the browser's cookies, keeping those it sets. */
  async fetchJson(method: 'GET' | 'POST', url: string, headers: Record<string, string>, payload?: unknown): Promise<LightMyRequestResponse> {
    return this.keep(await this.app.inject({ method, url, headers: { ...this.cookieHeader(), ...headers }, ...(payload === undefined ? {} : { payload: payload as object }) }));
  }

  /** Posts the page's form as its button `action` would, with its CSRF token and the fields given. */
  submit(page: LightMyRequestResponse, action: string, fields: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    return this.post(formActionOf(page.body), { csrf_token: csrfTokenOf(page.body), action, ...fields });
  }
}

/**
 * Signs in through the pages by password, allowing the consent page when it shows, as a person
 * would: the reply that sends the browser back to the app (a 303 to its redirect URI), or the page
 * it stopped on.
 */
export async function signInByPassword(browser: PageBrowser, authorizeUrl: string, email: string, password: string): Promise<LightMyRequestResponse> {
  let page = await browser.get(authorizeUrl);
  for (let step = 0; step < 3 && page.statusCode === 200; step += 1) {
    const buttons = [...page.body.matchAll(/name="action" value="([a-z_]+)"/g)].map((match) => match[1]);
    if (buttons.includes('password')) page = await browser.submit(page, 'password', { email, password });
    else if (buttons.includes('allow')) page = await browser.submit(page, 'allow');
    else break;
  }
  return page;
}
