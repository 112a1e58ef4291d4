/**
 * A browser without JavaScript for the hosted sign-in pages (API.md section 18), over real HTTP:
 * it keeps cookies, reads a page's form (its action, its hidden fields, its buttons' `action`
 * values) and posts it back as application/x-www-form-urlencoded, as a password manager or a
 * script does. It never follows a redirect to another origin: the last `Location` is what the
 * app would receive.
 */
export interface PageForm {
  action: string;
  fields: Record<string, string>;
  /** The values of the form's `action` buttons, in page order. */
  buttons: string[];
  /** The names of its text-like inputs (email, password, code…). */
  inputs: string[];
}

export interface PageReply {
  status: number;
  url: string;
  location: string | undefined;
  body: string;
  headers: Headers;
}

const attribute = (tag: string, name: string) => new RegExp(`\\s${name}="([^"]*)"`).exec(tag)?.[1];
const unescapeHtml = (text: string) => text.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

/** Every form of a page, as this browser submits them. */
export function formsOf(html: string, pageUrl: string): PageForm[] {
  return [...html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)].map(([, formTag, inside]) => {
    const fields: Record<string, string> = {};
    const inputs: string[] = [];
    for (const [input] of inside!.matchAll(/<input\b[^>]*>/g)) {
      const name = attribute(input, 'name');
      if (name === undefined) continue;
      if (attribute(input, 'type') === 'hidden') fields[name] = unescapeHtml(attribute(input, 'value') ?? '');
      else inputs.push(name);
    }
    const buttons = [...inside!.matchAll(/<button\b[^>]*>/g)].flatMap(([button]) => (attribute(button, 'name') === 'action' ? [attribute(button, 'value') ?? ''] : []));
    return { action: new URL(unescapeHtml(attribute(formTag!, 'action') ?? pageUrl), pageUrl).href, fields, buttons, inputs };
  });
}

export class PageBrowser {
  private readonly cookies = new Map<string, string>();

  private remember(headers: Headers): void {
    for (const line of headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const separator = pair!.indexOf('=');
      const name = pair!.slice(0, separator).trim();
      const value = pair!.slice(separator + 1).trim();
      if (value === '' || attributes.some((part) => /^\s*max-age=0\s*$/i.test(part))) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  private async send(url: string, init: RequestInit): Promise<PageReply> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0) headers.set('cookie', [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; '));
    const response = await fetch(url, { ...init, headers, redirect: 'manual' });
    this.remember(response.headers);
    const location = response.headers.get('location') ?? undefined;
    return { status: response.status, url, location: location && new URL(location, url).href, body: await response.text(), headers: response.headers };
  }

  /** A GET, following redirects that stay on the service's origin. */
  async open(url: string, headers: Record<string, string> = {}): Promise<PageReply> {
    let reply = await this.send(url, { headers });
    while (reply.status >= 300 && reply.status < 400 && reply.location && new URL(reply.location).origin === new URL(url).origin) reply = await this.send(reply.location, { headers });
    return reply;
  }

  /** Posts the page's form that has the button `action`, with the hidden fields and `values`. */
  async submit(page: PageReply, action: string, values: Record<string, string> = {}): Promise<PageReply> {
    const form = formsOf(page.body, page.url).find((candidate) => candidate.buttons.includes(action));
    if (!form) throw new Error(`no form with the button action=${action} on ${page.url} (${page.status}):\n${page.body.slice(0, 2000)}`);
    const body = new URLSearchParams({ ...form.fields, ...values, action });
    const reply = await this.send(form.action, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: body.toString() });
    if (reply.status >= 300 && reply.status < 400 && reply.location && new URL(reply.location).origin === new URL(form.action).origin) return this.open(reply.location);
    return reply;
  }
}

/**
 * Signs in through the pages by password, on one page or two (email first, `continue`), and
 * allows the consent page when it shows: the reply that sends the browser back to the app.
 */
export async function signInByPassword(browser: PageBrowser, authorizeUrl: string, email: string, password: string, consent: 'allow' | 'deny' = 'allow'): Promise<PageReply> {
  let page = await browser.open(authorizeUrl);
  for (let step = 0; step < 5; step += 1) {
    if (page.status !== 200) return page;
    const forms = formsOf(page.body, page.url);
    const has = (button: string) => forms.some((form) => form.buttons.includes(button));
    const hasInput = (input: string) => forms.some((form) => form.inputs.includes(input));
    if (has('password') && hasInput('password')) page = await browser.submit(page, 'password', hasInput('email') ? { email, password } : { password });
    else if (has('continue')) page = await browser.submit(page, 'continue', { email });
    else if (has(consent)) page = await browser.submit(page, consent);
    else throw new Error(`a page this browser cannot go on from (${page.status}):\n${page.body.slice(0, 2000)}`);
  }
  return page;
}
