import type { Page } from 'playwright-core';

/**
 * A person at the upstream provider (test/helpers/upstream-provider.ts) in a browser of its own:
 * it follows the provider's redirects by hand with the provider's cookies, and answers
 * oidc-provider's development interactions (its `devInteractions` feature, on by default) as
 * their forms would: POST /interaction/{uid} with `prompt=login` and `login` (the account's
 * `sub`; the development login takes any password), then `prompt=consent`. That is the simplest
 * working way: no login page of our own to write, and the provider does all of its real checks
 * (client, redirect URI, PKCE, scopes). It stops at the first redirect off the provider, the one
 * to the service's callback, and returns it.
 */
export async function signInAtUpstream(authorizationUrl: string, sub: string): Promise<URL> {
  const origin = new URL(authorizationUrl).origin;
  const cookies = new Map<string, string>();
  const cookieHeader = () => [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  const send = async (url: string, init: { method?: string; body?: URLSearchParams } = {}): Promise<Response> => {
    const response = await fetch(url, {
      method: init.method ?? 'GET',
      redirect: 'manual',
      headers: { cookie: cookieHeader(), ...(init.body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      body: init.body,
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const separator = pair.indexOf('=');
      cookies.set(pair.slice(0, separator), pair.slice(separator + 1));
    }
    return response;
  };
  let url = authorizationUrl;
  for (let step = 0; step < 12; step += 1) {
    const response = await send(url);
    await response.arrayBuffer();
    const location = response.headers.get('location');
    if (!location) throw new Error(`the upstream stopped at ${url}: ${response.status}`);
    const next = new URL(location, url);
    if (next.origin !== origin) return next;
    const interaction = /^\/interaction\/([^/]+)$/.exec(next.pathname);
    if (!interaction) {
      url = next.href;
      continue;
    }
    // The interaction's page says which prompt it is; its form posts back to the same URL.
    const page = await send(next.href);
    const html = await page.text();
    const prompt = html.includes('name="prompt" value="login"') ? 'login' : 'consent';
    const submitted = await send(next.href, { method: 'POST', body: new URLSearchParams(prompt === 'login' ? { prompt, login: sub, password: 'any' } : { prompt }) });
    await submitted.arrayBuffer();
    const resume = submitted.headers.get('location');
    if (!resume) throw new Error(`the upstream's ${prompt} did not redirect: ${submitted.status}`);
    url = new URL(resume, next.href).href;
  }
  throw new Error('the upstream redirected too often');
}

/**
 * The same person in a real browser (Chromium, at the upstream's pages): oidc-provider's
 * development login form, then its consent page when it asks. Returns once the browser has
 * left the login form; the caller waits for where the provider sends it.
 */
export async function signInAtUpstreamPage(page: Page, issuer: string, sub: string): Promise<void> {
  await page.waitForURL((url) => url.origin === issuer);
  await page.locator('input[name="login"]').fill(sub);
  await page.locator('input[name="password"]').fill('any');
  await page.locator('button[type="submit"]').click();
  // The login form goes; the consent page (when the provider asks) has its own submit.
  await page.locator('input[name="login"]').waitFor({ state: 'detached' });
  if (new URL(page.url()).origin === issuer) await page.locator('button[type="submit"]').click();
}
