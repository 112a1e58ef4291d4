import type { Config } from './config.js';

/**
 * The top of /docs (the OpenAPI `info.description`, before the conventions the http floor adds):
 * what the service is, a first call, and where the guide and the console are. It names the
 * areas, so it lives here beside app.ts, not in the http ground floor.
 */
export function apiIntroduction(config: Config): string {
  const base = config.publicUrl;
  return [
    "The accounts and catalogue back end of an online shop: customers' and staff's accounts (profile, password, role, status, store credit, sessions, second factors) and product variants (SKU, price, stock, reservations, imports and exports).",
    '',
    '**First call.** Sign in (the first start printed the first admin and its password), then send the access token as a bearer token (**Authorize** above takes it):',
    '',
    '```sh',
    `curl -s ${base}/api/auth/login -H 'content-type: application/json' -d '{"email":"admin@localhost","password":"…"}'`,
    `curl -s ${base}/api/users/profile -H "authorization: Bearer $TOKEN"`,
    '```',
    '',
    'Other services use an API client with scopes instead of a password (`POST /api/clients`, then the client credentials grant at `/api/oauth/token`). ' +
      'The guide with a worked example for every area is `docs/api.md` in the repository, and its README says how to run the service; the staff console is at [/admin](/admin). ' +
      'This page is generated from the route schemas; the same document is at [/openapi.json](/openapi.json), and its `webhooks` section gives the body of every event a webhook receives.',
  ].join('\n');
}
