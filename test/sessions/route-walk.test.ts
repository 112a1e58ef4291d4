import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import type { RouteEntry } from '../../src/http/route-table.js';
import { ANY_ROLE, scopesOf } from '../../src/sessions/access-rule.js';
import { createTokenIssuer } from '../../src/sessions/token-issuer.js';
import { PASSWORD_ONLY, startSession } from '../../src/sessions/token-pairs.js';
import { buildTestApp, createUser, loginAdmin, useAppWithAdmin, type Session, type TestApp } from '../helpers/test-app.js';
import { enrolTotp } from '../mfa/mfa-helpers.js';

const PROBLEM_KEYS = new Set(['type', 'title', 'status', 'detail', 'code', 'errors']);

/** A value for each path parameter that passes its pattern, naming nothing that exists. */
const PARAMETER_VALUES: Record<string, string> = { sku: 'WALK-SKU-1', product_id: 'walk-product' };
const fillPath = (url: string) => url.replace(/:([a-z_]+)/g, (_match, name: string) => PARAMETER_VALUES[name] ?? randomUUID());

/** The request a route's schema describes: its first body example, or `{}`. */
function requestFor(route: RouteEntry, headers: Record<string, string>): InjectOptions {
  const body = route.schema?.body as { examples?: unknown[] } | undefined;
  const payload = body ? (body.examples?.[0] ?? {}) : undefined;
  return { method: route.method as InjectOptions['method'], url: fillPath(route.url), headers, ...(payload === undefined ? {} : { payload: payload as object }) };
}

/**
 * API.md sections 3, 4, 12 and 17 over the whole route table, so that a route added tomorrow is
 * walked too: every route that needs credentials refuses each kind of refused caller (a step-up
 * route, a session whose second factor is not fresh) with its status
 * and code, answers with a problem and nothing else, and leaves every table as it was (no row,
 * no event, no mail).
 */
describe('every route refuses every refused caller, and changes nothing', () => {
  let testApp: TestApp;
  let admin: Session;
  const callers: { name: string; headers: Record<string, string>; status: number; code: string; applies: (route: RouteEntry) => boolean }[] = [];
  const scopes = (route: RouteEntry) => scopesOf(route.config!.access!);
  before(async () => {
    testApp = await buildTestApp({ environment: { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
    admin = await loginAdmin(testApp.app);
    const promoted = async (state: 'ended' | 'suspended' | 'deleted') => {
      const user = await createUser(testApp.app, { role: 'admin', admin });
      if (state === 'ended') await sql`update sessions set ended_at = now() where user_id = ${user.id}`.execute(testApp.db);
      if (state === 'suspended') await sql`update users set status = 'suspended' where id = ${user.id}`.execute(testApp.db);
      if (state === 'deleted') await sql`update users set deleted_at = now() where id = ${user.id}`.execute(testApp.db);
      return user.auth;
    };
    const customer = await createUser(testApp.app);
    const manager = await createUser(testApp.app, { role: 'manager', admin });
    // An admin with a second factor verified longer ago than MFA_STEP_UP_MAX_AGE (section 12, and
    // section 17's routes that add a factor).
    const unverified = await createUser(testApp.app, { role: 'admin', admin });
    await enrolTotp(testApp.app, unverified);
    await sql`update sessions set mfa_verified_at = now() - interval '1 hour' where user_id = ${unverified.id}`.execute(testApp.db);
    const every = () => true;
    const excludes = (role: string) => (route: RouteEntry) => !(route.config?.access?.roles ?? ANY_ROLE).includes(role as never);
    callers.push(
      { name: 'no token', headers: {}, status: 401, code: 'unauthenticated', applies: (route) => !route.config?.access?.tokenOptional },
      // A route whose token may come in the body instead (a login's second step) refuses the body's unknown mfa_token.
      { name: 'no token, and an mfa_token the service never issued', headers: {}, status: 401, code: 'invalid_mfa_token', applies: (route) => route.config?.access?.tokenOptional === true },
      { name: 'a token that is no token', headers: { authorization: 'Bearer not.a.token' }, status: 401, code: 'invalid_token', applies: every },
      { name: 'an ended session', headers: await promoted('ended'), status: 401, code: 'invalid_token', applies: every },
      { name: 'a suspended admin', headers: await promoted('suspended'), status: 403, code: 'account_suspended', applies: every },
      { name: 'a deleted admin', headers: await promoted('deleted'), status: 401, code: 'invalid_token', applies: every },
      { name: 'a customer', headers: customer.auth, status: 403, code: 'forbidden', applies: excludes('user') },
      { name: 'a manager', headers: manager.auth, status: 403, code: 'forbidden', applies: excludes('manager') },
      { name: 'an admin whose second factor is not fresh', headers: unverified.auth, status: 403, code: 'step_up_required', applies: (route) => route.config?.access?.stepUp === true },
    );
    // API clients: every route for users only refuses them; every scoped route refuses one without its scope.
    const client = async (held: string[]) => {
      const created = await testApp.app.inject({ method: 'POST', url: '/api/clients', headers: admin.auth, payload: { name: `Walker ${held.join(' ')}`, scopes: held } });
      return { authorization: `Bearer ${created.json().secret as string}` };
    };
    const auditor = await client(['events:read']);
    const reader = await client(['variants:read']);
    callers.push(
      { name: 'an API client', headers: auditor, status: 403, code: 'forbidden', applies: (route) => scopes(route).length === 0 },
      { name: 'an API client without the scope (events:read)', headers: auditor, status: 403, code: 'insufficient_scope', applies: (route) => scopes(route).length > 0 && !scopes(route).includes('events:read') },
      { name: 'an API client without the scope (variants:read)', headers: reader, status: 403, code: 'insufficient_scope', applies: (route) => scopes(route).includes('events:read') },
    );
    // An admin's tokens through an app (section 18): with `openid` alone no route opens; with
    // every scope, a route for direct sign-ins still refuses it.
    const app = await testApp.app.inject({
      method: 'POST',
      url: '/api/clients',
      headers: admin.auth,
      payload: { name: 'Walker app', type: 'confidential', redirect_uris: ['https://shop.example.com/callback'], scopes: ['openid', 'account', 'users:read', 'users:write', 'variants:read', 'variants:write', 'inventory:read', 'inventory:write', 'reservations:write', 'balance:read', 'balance:write', 'events:read'] },
    });
    const appToken = async (granted: string[]) => {
      const pair = await startSession(testApp.db, createTokenIssuer(testApp.config, undefined), admin.id, { userAgent: 'walker', ip: '127.0.0.1' }, PASSWORD_ONLY, { clientId: app.json().id, scopes: granted });
      return { authorization: `Bearer ${pair.access_token}` };
    };
    const directOnly = (route: RouteEntry) => route.config?.access?.directSignInOnly === true;
    // Userinfo, the one route `openid` opens, refuses a direct sign-in's token and an app's without `openid`.
    const forAppToken = (route: RouteEntry) => route.config?.access?.appTokenScope !== undefined;
    callers.push(
      { name: "an admin's app token with openid alone", headers: await appToken(['openid']), status: 403, code: 'insufficient_scope', applies: (route) => !directOnly(route) && !forAppToken(route) },
      { name: "an admin's app token with every scope but openid, on a route for an app's token", headers: await appToken(app.json().scopes.filter((scope: string) => scope !== 'openid')), status: 403, code: 'insufficient_scope', applies: forAppToken },
      { name: "a customer's direct sign-in, on a route for an app's token", headers: customer.auth, status: 403, code: 'insufficient_scope', applies: forAppToken },
      { name: "an admin's app token with openid alone, on a route for direct sign-ins", headers: await appToken(['openid']), status: 403, code: 'forbidden', applies: directOnly },
      { name: "an admin's app token with every scope, on a route for direct sign-ins", headers: await appToken(app.json().scopes), status: 403, code: 'forbidden', applies: directOnly },
    );
  });
  after(() => testApp.close());

  /** A fingerprint of every row of every table. */
  async function everyRow(): Promise<Record<string, string>> {
    const tables = await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by 1`.execute(testApp.db);
    const prints: Record<string, string> = {};
    for (const { name } of tables.rows) {
      const row = await sql<{ print: string | null }>`select md5(string_agg(t::text, '|' order by t::text)) as print from ${sql.table(name)} as t`.execute(testApp.db);
      prints[name] = row.rows[0]?.print ?? '';
    }
    return prints;
  }

  const onlyAProblem = (response: LightMyRequestResponse) => {
    assert.match(String(response.headers['content-type']), /^application\/problem\+json/, response.body);
    const body = response.json() as Record<string, unknown>;
    for (const key of Object.keys(body)) assert.ok(PROBLEM_KEYS.has(key), `the reply carries ${key}`);
    return body;
  };

  it('walks the route table', async () => {
    // HEAD mirrors GET without a body; the GET is walked.
    const routes = testApp.app.routeTable.filter((route) => route.config?.access && !route.config.access.public && route.method !== 'HEAD');
    assert.ok(routes.length >= 45, `${routes.length} routes with a rule`);
    // Every route of the API declares a rule (the app refuses to start otherwise).
    for (const route of testApp.app.routeTable.filter((candidate) => candidate.url.startsWith('/api') && !candidate.config?.literalSegmentGuard)) {
      assert.ok(route.config?.access, `${route.method} ${route.url} declares its rule`);
    }
    // Section 18: what stays with a direct sign-in (change-password, second factors, self-deletion,
    // API clients, webhooks, signing keys, identity providers and the identities linked to the
    // user, section 20, and an admin's reading of another user's identities and consents), and
    // the user's own routes an app's `account` opens.
    const declared = (flag: 'directSignInOnly' | 'account') => routes.filter((route) => route.config!.access![flag]).map((route) => `${route.method} ${route.url}`).sort();
    const directOnlyExpected = (name: string) => /^\S+ \/api\/(clients|webhooks|signing-keys|identity-providers|auth\/mfa|users\/profile\/apps|users\/profile\/identities|users\/profile\/connectable-providers)(\/|$)/.test(name) || ['PUT /api/users/change-password', 'DELETE /api/users/profile', 'DELETE /api/users/:id/mfa', 'GET /api/users/:id/identities', 'GET /api/users/:id/apps'].includes(name);
    assert.deepEqual(declared('directSignInOnly'), routes.map((route) => `${route.method} ${route.url}`).filter(directOnlyExpected).sort());
    // Section 18: `openid` (and profile, email, phone with it) opens userinfo and nothing else.
    assert.deepEqual(routes.filter((route) => route.config!.access!.appTokenScope).map((route) => `${route.method} ${route.url} ${route.config!.access!.appTokenScope}`).sort(), ['GET /oauth/userinfo openid', 'POST /oauth/userinfo openid']);
    assert.deepEqual(declared('account'), ['DELETE /api/auth/sessions/:id', 'GET /api/auth/sessions', 'GET /api/users/:id/balance/ledger', 'GET /api/users/profile', 'GET /api/users/profile/export', 'PATCH /api/users/profile', 'PUT /api/users/profile']);
    let walked = 0;
    for (const route of routes) {
      for (const caller of callers.filter((candidate) => candidate.applies(route))) {
        const before = await everyRow();
        const response = await testApp.app.inject(requestFor(route, caller.headers));
        const what = `${route.method} ${route.url} as ${caller.name}`;
        if (caller.code === 'insufficient_scope') {
          // The scope that would open the route, when one would (an app's `account` on an own route).
          const named = scopes(route)[0] ?? route.config?.access?.appTokenScope ?? (route.config?.access?.account ? 'account' : undefined);
          assert.equal(response.headers['www-authenticate'], `Bearer error="insufficient_scope"${named ? `, scope="${named}"` : ''}`, what);
        }
        assert.equal(response.statusCode, caller.status, `${what}: ${response.statusCode} ${response.body}`);
        assert.equal(onlyAProblem(response).code, caller.code, what);
        assert.deepEqual(await everyRow(), before, `${what} changed a table`);
        walked++;
      }
    }
    assert.ok(walked > routes.length * 5, `${walked} refusals walked`);
  });
});

/** The properties a route's body schema names (an object schema's; none for another shape). */
const bodyProperties = (route: RouteEntry): string[] => Object.keys((route.schema?.body as { properties?: Record<string, unknown> } | undefined)?.properties ?? {});

/**
 * API.md section 17 over the whole route table: every route that takes a signed-in user's
 * password counts a wrong one like a failed login, and every token a body carries is judged as
 * a token (a string that is not a live one of its kind is refused as unknown), never as a
 * schema error for its length.
 */
describe('every route that takes a password or a token in its body, as section 17 says', () => {
  const fixture = useAppWithAdmin();

  const authenticated = () => fixture.app.routeTable.filter((route) => route.config?.access && !route.config.access.public && route.method !== 'HEAD');

  it("counts a signed-in user's wrong password toward the account's failed logins, on every route that takes one", async () => {
    const routes = authenticated().filter((route) => bodyProperties(route).some((name) => name === 'password' || name === 'current_password'));
    assert.ok(routes.length >= 4, `${routes.length} routes take a password: ${routes.map((route) => `${route.method} ${route.url}`).join(', ')}`);
    for (const route of routes) {
      const user = await createUser(fixture.app, { admin: fixture.admin });
      const request = requestFor(route, user.auth);
      const field = bodyProperties(route).includes('current_password') ? 'current_password' : 'password';
      const payload = { ...(request.payload as object), [field]: 'a-wrong-password-1' };
      const what = `${route.method} ${route.url}`;
      const reply = await fixture.app.inject({ ...request, payload });
      assert.equal(reply.statusCode, 403, `${what}: ${reply.body}`);
      assert.equal(reply.json().code, 'wrong_password', what);
      const failures = await fixture.db.selectFrom('account_attempts').select('id').where('kind', '=', 'login_failure').where('subject', '=', user.email.toLowerCase()).execute();
      assert.equal(failures.length, 1, `${what}: the wrong password counts as a failed login`);
    }
  });

  it('refuses a body token of any length that is not a live token of its kind as unknown, not as too long', async () => {
    const routes = fixture.app.routeTable.filter((route) => route.config?.access && route.method !== 'HEAD' && bodyProperties(route).some((name) => name.endsWith('token')));
    assert.ok(routes.length >= 5, `${routes.length} routes take a token: ${routes.map((route) => `${route.method} ${route.url}`).join(', ')}`);
    const longest = 'x'.repeat(10_000);
    for (const route of routes) {
      for (const name of bodyProperties(route).filter((property) => property.endsWith('token'))) {
        const request = requestFor(route, route.config!.access!.public || route.config!.access!.tokenOptional ? {} : fixture.admin.auth);
        const reply = await fixture.app.inject({ ...request, payload: { ...(request.payload as object), [name]: longest } });
        const what = `${route.method} ${route.url} with a ${name} of 10,000 characters`;
        assert.ok(reply.statusCode < 500, `${what}: ${reply.statusCode}`);
        if (reply.statusCode === 400) {
          const problem = reply.json() as { code: string; errors?: { path?: string }[] };
          assert.ok(!(problem.code === 'validation_failed' && problem.errors?.some((error) => error.path === `/${name}`)), `${what}: a schema error ${reply.body}`);
        }
      }
    }
  });
});
