import type { Role } from '../db/tables.js';

/**
 * The scopes an API client may hold (API.md section 11): each names the operations it opens.
 * A route declares the scope that opens it; a route without one is for users only.
 */
export const SCOPES = {
  'variants:read': 'every GET of the variants',
  'variants:write': 'creating, changing and deleting variants, the batch, and imports',
  'inventory:read': 'stock movements and reservations, read',
  'inventory:write': 'stock changes and adjustments',
  'reservations:write': 'creating, reading, committing and releasing reservations',
  'users:read': 'listing and reading users',
  'users:write': "users' roles, status and deletion",
  'balance:read': "users' balance ledgers",
  'balance:write': "changing users' balances",
  'events:read': 'the audit log',
} as const;

export type Scope = keyof typeof SCOPES;
export const SCOPE_NAMES = Object.keys(SCOPES) as Scope[];

/**
 * The scopes only an app may hold (API.md section 18): what it may ask a user to grant when it
 * signs the user in. They open no operation of an API client of its own.
 */
export const SIGN_IN_SCOPES = {
  openid: "sign the user in (OpenID Connect): an ID token and the user's id",
  profile: "the user's name",
  email: "the user's email address and whether it is verified",
  phone: "the user's phone number",
  offline_access: 'a refresh token, to stay signed in',
  account: "the user's own routes (profile, sessions, own ledger and exports)",
} as const;
export type SignInScope = keyof typeof SIGN_IN_SCOPES;
export const SIGN_IN_SCOPE_NAMES = Object.keys(SIGN_IN_SCOPES) as SignInScope[];

export const ANY_ROLE: readonly Role[] = ['user', 'manager', 'admin'];
export const STAFF: readonly Role[] = ['manager', 'admin'];
export const ADMIN: readonly Role[] = ['admin'];

/**
 * Who may call a route, declared on the route (`config.access`) and applied by the admission
 * step (admission.ts) before the handler can reach the database.
 */
export interface AccessRule {
  /** No token: register, login, the JWKS. */
  public?: true;
  /** The user roles allowed. */
  roles?: readonly Role[];
  /** Also the user the path parameter of this name names (GET /api/users/{id} for the user itself). */
  orSelf?: string;
  /**
   * The scope that lets an API client call the route (or the scopes, any of which does; the
   * first is the one a refusal names); without one, the route is for users only.
   */
  scope?: Scope | readonly Scope[];
  /** A user with a second factor must have verified it within MFA_STEP_UP_MAX_AGE. */
  stepUp?: true;
  /** Open to a user whose role requires a second factor and who has none yet (to enrol). */
  duringEnrolment?: true;
  /**
   * No token needed (the body proves who asks, as an `mfa_token` does); a request that sends one
   * is admitted under the rest of the rule.
   */
  tokenOptional?: true;
  /**
   * One of the user's own routes (API.md section 18): an app's token with the `account` scope
   * may call it for its user (on an `orSelf` route, for its user only).
   */
  account?: true;
  /**
   * Only a token of a direct sign-in may call it (section 3, or the hosted pages' own): an app's
   * token is 403 `forbidden` whatever its scopes (change-password, second factors, self-deletion,
   * API clients, webhooks, signing keys).
   */
  directSignInOnly?: true;
  /**
   * Only an app's token carrying this scope may call it (`/oauth/userinfo`: `openid`): a direct
   * sign-in's token and an app's without it are 403 `insufficient_scope`, an API client 403
   * `forbidden`. The sign-in scopes open nothing else: no other rule can name one.
   */
  appTokenScope?: 'openid';
}

export const PUBLIC: AccessRule = { public: true };

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Every route declares who may call it; the app refuses to start with a route that does not. */
    access?: AccessRule;
  }
}

/** The scopes that open a route to API clients, the one a refusal names first. */
export const scopesOf = (rule: AccessRule): readonly Scope[] => (rule.scope === undefined ? [] : typeof rule.scope === 'string' ? [rule.scope] : rule.scope);

/** How the rule reads in a route's OpenAPI description. */
export function describeRule(rule: AccessRule): string {
  if (rule.public) return 'No token needed.';
  const optional = rule.tokenOptional ? 'No token needed with an `mfa_token`; with a token: ' : 'Who: ';
  const roles = rule.roles && rule.roles.length < ANY_ROLE.length ? rule.roles.join(', ') : 'any user';
  const who = rule.orSelf ? `${roles}, or the user itself` : roles;
  const scopes = scopesOf(rule);
  const clients = scopes.length > 0 ? `API clients with scope ${scopes.map((scope) => `\`${scope}\``).join(' or ')}` : 'users only (API clients are refused)';
  const enrolment = rule.duringEnrolment ? ' Open to a user whose role requires a second factor before one is added.' : '';
  const stepUp = rule.stepUp ? ' Step-up: a user with a second factor must have verified it in this session within MFA_STEP_UP_MAX_AGE seconds (else 403 `step_up_required`).' : '';
  if (rule.appTokenScope) {
    return `Who: only an app's token for a user (an app signing the user in) with the scope \`${rule.appTokenScope}\`; a direct sign-in's token and an app's without it are 403 \`insufficient_scope\`, API clients 403 \`forbidden\`.`;
  }
  const apps = rule.directSignInOnly
    ? " An app's token (an app signing a user in) is refused: only a direct sign-in's."
    : rule.account
      ? ` An app's token acts for its user with the scope \`account\`${rule.orSelf ? ' (for its user only)' : ''}${scopes.length > 0 ? ' or the scope above, where the role allows' : ''}.`
      : scopes.length > 0
        ? " An app's token acts for its user with the scope above, where the user's role allows."
        : '';
  return `${optional}${who}; ${clients}.${enrolment}${stepUp}${apps}`;
}

/** The rule of a route as its OpenAPI operation shows it: in words, and its scopes as `x-scopes`. */
export function describeAccess(config: { access?: AccessRule } | undefined): { words: string; extensions: Record<string, unknown> } | undefined {
  const rule = config?.access;
  if (!rule) return undefined;
  const scopes = scopesOf(rule);
  // OpenAPI: the requirements are alternatives: a bearer token (a user's, or a client's secret), or an OAuth token with a scope.
  const security = rule.public ? [] : scopes.length > 0 ? [{ bearerAuth: [] }, { oauth2: [...scopes] }] : rule.tokenOptional ? [{}, { bearerAuth: [] }] : [{ bearerAuth: [] }];
  return { words: describeRule(rule), extensions: { 'x-scopes': scopes, security } };
}
