/**
 * An app's sign-in (API.md section 18), measured two ways: the whole authorization code flow of a
 * first-party public app against its bare reference (bench/signin-reference.ts), and the by-id
 * read with the access token such an app gets against the token of a direct sign-in.
 */
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import { freePort, postJson, startService } from '../test/helpers/service-process.js';
import { measure, percentile, type Figures } from './measure.js';
import { cpuSeconds, pick } from './setup.js';

/** Where the bench's app has users sent back: a loopback http URI, which nothing needs to serve (the flow reads the 303's Location). */
const REDIRECT_URI = 'http://127.0.0.1/bench/callback';
/** The scopes of goal 1's sign-in; the app also holds `variants:read`, which goal 2's token asks for. */
const SIGNIN_SCOPE = 'openid email profile';
const APP_SCOPES = ['openid', 'email', 'profile', 'variants:read'];
/** The bench's PUBLIC_URL is http on a loopback host, where the sign-in cookie has no `__Host-` prefix. */
const SIGNIN_COOKIE = 'shop_sid';

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One request over a keep-alive agent: what the three steps need of a reply, with nothing followed on its own. */
function send(agent: http.Agent, baseUrl: string, method: 'GET' | 'POST', path: string, headers: Record<string, string>, body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${baseUrl}${path}`, { method, agent, headers: body === undefined ? headers : { ...headers, 'content-length': Buffer.byteLength(body) } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString() }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(body);
  });
}

/** A first-party public app (no consent page, no secret) that may ask for the sign-in scopes and `variants:read`. */
async function registerApp(baseUrl: string, auth: Record<string, string>): Promise<string> {
  const reply = await postJson(`${baseUrl}/api/clients`, { name: 'Bench storefront', type: 'public', first_party: true, redirect_uris: [REDIRECT_URI], scopes: APP_SCOPES }, auth);
  if (reply.status !== 201) throw new Error(`registering the bench app failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return String(reply.body?.id);
}

/** An authorization request of the app, with a new PKCE pair, state and nonce; the verifier and state to check against. */
function authorizationRequest(appId: string, scope: string) {
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(12).toString('base64url');
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: appId,
    redirect_uri: REDIRECT_URI,
    scope,
    state,
    nonce: randomBytes(12).toString('base64url'),
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  });
  return { path: `/oauth/authorize?${query}`, verifier, state };
}

/** The cookies a reply sets, by name. */
function setCookies(headers: Headers, into: Map<string, string>): void {
  for (const line of headers.getSetCookie()) {
    const pair = line.split(';')[0]!;
    into.set(pair.slice(0, pair.indexOf('=')).trim(), pair.slice(pair.indexOf('=') + 1).trim());
  }
}

/**
 * Signs `email` in through the hosted pages as a browser would (test/helpers/page-browser.ts,
 * `signInByPassword`): the sign-in page, its form posted back with the CSRF token and the
 * password; the sign-in session's cookie, `shop_sid=…`.
 */
async function signInThroughPages(baseUrl: string, appId: string, email: string, password: string): Promise<string> {
  const cookies = new Map<string, string>();
  const cookieHeader = () => [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  let page = await fetch(`${baseUrl}${authorizationRequest(appId, SIGNIN_SCOPE).path}`, { redirect: 'manual' });
  setCookies(page.headers, cookies);
  for (let step = 0; step < 3 && page.status === 200; step += 1) {
    const html = await page.text();
    const csrfToken = /name="csrf_token" value="([^"]+)"/.exec(html)?.[1];
    const action = /<form[^>]* action="([^"]+)"/.exec(html)?.[1]?.replace(/&amp;/g, '&');
    const buttons = [...html.matchAll(/name="action" value="([a-z_]+)"/g)].map((match) => match[1]);
    if (!csrfToken || !action) break;
    const fields: Record<string, string> | undefined = buttons.includes('password') ? { action: 'password', email, password } : buttons.includes('continue') ? { action: 'continue', email } : undefined;
    if (!fields) break;
    page = await fetch(`${baseUrl}${action}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieHeader() },
      body: new URLSearchParams({ csrf_token: csrfToken, ...fields }).toString(),
    });
    setCookies(page.headers, cookies);
  }
  const secret = cookies.get(SIGNIN_COOKIE);
  if (page.status !== 303 || !secret) throw new Error(`signing ${email} in through the pages failed: ${page.status}`);
  return `${SIGNIN_COOKIE}=${secret}`;
}

/**
 * One sign-in of the app for a browser already signed in, as the app does it: the authorization
 * request (a 303 with the code and the state sent), the code exchanged with its verifier (an
 * access token and an ID token), then userinfo with the access token. The access token when all
 * three answered as they must; undefined otherwise.
 */
async function signInOnce(agent: http.Agent, baseUrl: string, appId: string, cookie: string, scope: string): Promise<string | undefined> {
  const request = authorizationRequest(appId, scope);
  const authorized = await send(agent, baseUrl, 'GET', request.path, { cookie });
  const redirect = authorized.status === 303 ? new URL(String(authorized.headers.location)) : undefined;
  const code = redirect?.searchParams.get('code');
  if (!code || redirect?.searchParams.get('state') !== request.state) return undefined;
  const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: request.verifier, client_id: appId }).toString();
  const granted = await send(agent, baseUrl, 'POST', '/api/oauth/token', { 'content-type': 'application/x-www-form-urlencoded' }, form);
  if (granted.status !== 200) return undefined;
  const tokens = JSON.parse(granted.body) as { access_token: string; id_token?: string };
  if (scope.includes('openid') && !tokens.id_token) return undefined;
  const userInfo = await send(agent, baseUrl, 'GET', '/oauth/userinfo', { authorization: `Bearer ${tokens.access_token}` });
  return userInfo.status === 200 ? tokens.access_token : undefined;
}

/** `cookies.length` workers signing in again and again for `seconds`, each with its own browser's sign-in session. */
async function signInLoad(name: string, baseUrl: string, appId: string, cookies: string[], seconds: number): Promise<Figures> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: cookies.length });
  const latencies: number[] = [];
  let failures = 0;
  const deadline = Date.now() + seconds * 1000;
  const worker = async (cookie: string) => {
    while (Date.now() < deadline) {
      const started = performance.now();
      if (await signInOnce(agent, baseUrl, appId, cookie, SIGNIN_SCOPE)) latencies.push(performance.now() - started);
      else failures++;
    }
  };
  try {
    await Promise.all(cookies.map(worker));
  } finally {
    agent.destroy();
  }
  latencies.sort((a, b) => a - b);
  return { name, requestsPerSecond: latencies.length / seconds, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), errors: failures, non2xx: 0, total: latencies.length };
}

export interface SignInBenchData {
  auth: Record<string, string>;
  users: { id: string; email: string }[];
  variants: { id: string }[];
}

/** The app, and one browser's sign-in session for each of `workers` users (so workers do not all read one row). */
export async function prepareSignIns(baseUrl: string, data: SignInBenchData, workers: number) {
  const appId = await registerApp(baseUrl, data.auth);
  const cookies: string[] = [];
  // One at a time: each is an argon2 check of the password, slow by design; 16 of them at once would only queue.
  for (const user of data.users.slice(0, workers)) cookies.push(await signInThroughPages(baseUrl, appId, user.email, 'bench-password'));
  return { appId, cookies };
}

/**
 * The whole sign-in of the app (authorize, exchange, userinfo), the service against the bare
 * reference: one process of each for the whole comparison, each first warmed by `warmUp` seconds
 * of sign-ins unmeasured, then alternated in `rounds` rounds (reference, service, ...), as the
 * flash sale is. Ratio: the service's sign-ins over the reference's, summed over the rounds.
 */
export async function runSignInComparison(
  service: { baseUrl: string; pid: number },
  databaseUrl: string,
  signIns: { appId: string; cookies: string[] },
  options: { duration: number; rounds: number; warmUp: number },
) {
  const reference = await startService({ PORT: await freePort(), DATABASE_URL: databaseUrl, DATABASE_POOL_SIZE: '10', ACCESS_TOKEN_TTL: '3600' }, 'bench/signin-reference.ts');
  const rows: Figures[] = [];
  const signedIn = { reference: 0, service: 0 };
  // Each process's own CPU time per sign-in, round by round: where the gap is spent, beside the database's share.
  const cpuMicroseconds = { reference: [] as number[], service: [] as number[] };
  try {
    const sides = [
      { side: 'reference' as const, name: 'bare reference: authorize + token + userinfo', baseUrl: reference.baseUrl, pid: reference.child.pid! },
      { side: 'service' as const, name: 'service: GET /oauth/authorize + POST /api/oauth/token + GET /oauth/userinfo', baseUrl: service.baseUrl, pid: service.pid },
    ];
    for (const side of sides) await signInLoad(side.name, side.baseUrl, signIns.appId, signIns.cookies, options.warmUp);
    for (let round = 0; round < options.rounds; round++) {
      for (const side of sides) {
        const cpuBefore = await cpuSeconds(side.pid);
        const figures = await signInLoad(side.name, side.baseUrl, signIns.appId, signIns.cookies, options.duration);
        cpuMicroseconds[side.side].push((((await cpuSeconds(side.pid)) - cpuBefore) / Math.max(figures.total, 1)) * 1e6);
        rows.push(figures);
        signedIn[side.side] += figures.total;
      }
    }
  } finally {
    reference.child.kill('SIGTERM');
    await reference.exited;
  }
  const failures = rows.reduce((sum, row) => sum + row.errors, 0);
  return { rows, ratio: signedIn.service / signedIn.reference, failures, cpuMicroseconds };
}

/**
 * `GET /api/variants/{id}` with the access token the app gets for a user (scope `variants:read`,
 * by the code flow) against the token of the same user's direct sign-in (POST /api/auth/login),
 * alternated in `rounds` rounds (direct then app, app then direct, ...) on the one service process, each with
 * autocannon at `connections`. Ratio: the app token's reads over the direct token's, summed.
 */
export async function runAppTokenComparison(
  service: { baseUrl: string; pid: number },
  data: SignInBenchData,
  signIns: { appId: string; cookies: string[] },
  options: { connections: number; duration: number; rounds: number; warmUp: number },
) {
  const user = data.users[0]!;
  const agent = new http.Agent({ keepAlive: true });
  const appToken = await signInOnce(agent, service.baseUrl, signIns.appId, signIns.cookies[0]!, 'openid variants:read');
  agent.destroy();
  if (!appToken) throw new Error('the app could not get a token for the by-id read');
  const login = await postJson(`${service.baseUrl}/api/auth/login`, { email: user.email, password: 'bench-password' });
  if (login.status !== 200) throw new Error(`the direct sign-in failed: ${login.status}`);
  const ids = data.variants.map((variant) => variant.id);
  const sides = [
    { side: 'direct' as const, name: "GET /api/variants/{id}, a user's token (POST /api/auth/login)", headers: { authorization: `Bearer ${login.body?.access_token}` } },
    { side: 'app' as const, name: "GET /api/variants/{id}, an app's token for the same user (code flow, scope variants:read)", headers: { authorization: `Bearer ${appToken}` } },
  ];
  const rows: Figures[] = [];
  const reads = { direct: 0, app: 0 };
  // The service's own CPU time per read, round by round: on a machine others load, steadier than the rate.
  const cpuMicroseconds = { direct: [] as number[], app: [] as number[] };
  for (let round = 0; round < options.rounds; round++) {
    // Each round the other goes first, so that neither always meets the machine right after the other's load.
    for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
      let cpuBefore = 0;
      const afterWarmUp = async () => void (cpuBefore = await cpuSeconds(service.pid));
      // The first round of each warms the route's code up for longer; later ones get measure's one second.
      const figures = await measure(
        service.baseUrl,
        { name: side.name, path: () => `/api/variants/${pick(ids)}`, headers: side.headers },
        { connections: options.connections, duration: options.duration, warmUpSeconds: round === 0 ? options.warmUp : 1, afterWarmUp },
      );
      cpuMicroseconds[side.side].push((((await cpuSeconds(service.pid)) - cpuBefore) / Math.max(figures.total, 1)) * 1e6);
      rows.push(figures);
      reads[side.side] += figures.requestsPerSecond;
    }
  }
  const faults = rows.reduce((sum, row) => sum + row.errors + row.non2xx, 0);
  return { rows, ratio: reads.app / reads.direct, faults, cpuMicroseconds };
}
