import { sql, type ExpressionBuilder, type Kysely, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { jsonBuildObject } from 'kysely/helpers/postgres';
import { preparedQuery } from '../db/prepared-query.js';
import type { Database, Role } from '../db/tables.js';

/** Whom a request's credentials name, before the database is asked about them. */
export interface UserKey {
  kind: 'user';
  userId: string;
  sessionId: string;
}
/** An app's access token: a user, in a session the app started, within the scopes it carries (API.md section 18). */
export interface AppUserKey {
  kind: 'app-user';
  userId: string;
  sessionId: string;
  clientId: string;
  /** The scopes the token carries; the request may use those the app still holds. */
  scopes: readonly string[];
}
/** An API client's secret sent as the bearer token: the client is known once the database is asked. */
export interface ClientSecretKey {
  kind: 'client-secret';
  secretHash: string;
}
/** An API client's access token (client credentials grant). */
export interface ClientTokenKey {
  kind: 'client-token';
  clientId: string;
  /** The scopes the token was granted; the request may use those the client still holds. */
  scopes: readonly string[];
  /** The client's token generation the token was issued in (disabling the client moves it on). */
  generation: number;
}
export type CallerKey = UserKey | AppUserKey | ClientSecretKey | ClientTokenKey;

/** Credentials that name a user in a session: a direct sign-in's token or an app's. */
export const namesUser = (key: CallerKey): key is UserKey | AppUserKey => key.kind === 'user' || key.kind === 'app-user';

/**
 * The caller as the database says now, in the columns the admission decides on. Prefixed, so a
 * gate's condition (callerLetIn) reads them apart from the columns of what a statement writes.
 */
export interface CallerColumns {
  caller__kind: 'user' | 'client';
  caller__id: string;
  caller__role: Role | null;
  /** `active`, `suspended` or `deleted` (a user), `disabled` (a client). */
  caller__status: string;
  /** The session is open (a user); the secret or token still counts (a client). */
  caller__live: boolean;
  /** Its last use was noted more than a minute ago: note it again. */
  caller__stale: boolean;
  /**
   * A client's scopes; for a user, null in a direct sign-in's session and the scopes an app's
   * token may use in an app's session (so a user with scopes is acting through an app).
   */
  caller__scopes: string[] | null;
  /** A client's own rate limit (null: API_RATE_LIMIT); null for a user. */
  caller__rate_limit: number | null;
  /** The secret a client sent as its bearer token, to note its use; null otherwise. */
  caller__credential: string | null;
  /** The user has a confirmed second factor (false for a client). */
  caller__mfa_enrolled: boolean;
  /** Whole seconds since the session last verified a second factor; null if it never did (or a client). */
  caller__mfa_age: number | null;
}

/** One probe of whether the user (`users.id`) has a confirmed second factor: a row, or none. */
const confirmedFactorOfUser = (from: ExpressionBuilder<Database, 'users'>) =>
  from
    .selectFrom('mfa_factors')
    .select(sql<boolean>`true`.as('enrolled'))
    .whereRef('mfa_factors.user_id', '=', 'users.id')
    .where('mfa_factors.confirmed_at', 'is not', null)
    .limit(sql.lit(1))
    .as('confirmed_factor');

/**
 * A user's status, `deleted` once the account is deleted (which admission.ts answers as it does a
 * user that is not there: 401). The user is found by its primary key alone and deletion is read
 * here, not in the `where`: with `deleted_at is null` there, every partial index of live users
 * (`users_admins`, `users_by_creation`) matched the condition too, and with no statistics on the
 * table yet (a new shop's, a bench's, or a table much larger than when it was last analyzed)
 * PostgreSQL walked one of them and fetched every live user's row to find the one
 * (bench/README.md, 2026-11-29).
 */
const userStatus = sql<string>`case when users.deleted_at is null then users.status else 'deleted' end`;

/**
 * A caller's statement before its columns are chosen: the rows it reads (`from`, its joins and its
 * `where`), and the caller's columns as expressions over them. A write's first statement selects
 * the columns as they are (`callerOf`); a read beside the caller selects them as one JSON
 * column in the same statement as the data (`besideCaller`).
 */
interface CallerSource {
  from: SelectQueryBuilder<any, any, {}>;
  columns: { [Column in keyof CallerColumns]: RawBuilder<CallerColumns[Column]> };
}

/** The columns of a user's caller that are the same for a direct sign-in and an app's token. */
function userColumns(live: RawBuilder<boolean>, scopes: RawBuilder<string[] | null>): CallerSource['columns'] {
  return {
    caller__kind: sql<'user'>`'user'`,
    caller__id: sql.ref<string>('users.id'),
    caller__role: sql.ref<Role | null>('users.role'),
    caller__status: userStatus,
    caller__live: live,
    // Worked out on the database's clock: a flag costs less to read than a timestamp.
    caller__stale: sql<boolean>`(sessions.last_used_at is null or sessions.last_used_at < now() - interval '1 minute')`,
    caller__scopes: scopes,
    caller__rate_limit: sql<number | null>`null::integer`,
    caller__credential: sql<string | null>`null::uuid`,
    caller__mfa_enrolled: sql<boolean>`coalesce(confirmed_factor.enrolled, false)`,
    caller__mfa_age: sql<number | null>`floor(extract(epoch from now() - sessions.mfa_verified_at))::integer`,
  };
}

/**
 * The caller of a user's access token: the user by id, beside the session the token names and
 * whether the user has a confirmed second factor. That last is one probe of the user's factors,
 * joined laterally: as an `exists` column, PostgreSQL inlined it into each gate condition that
 * reads it and ran it up to three times a statement (as a hash of every confirmed factor while
 * the table is small; bench/README.md, 2026-11-28). Without a gate, as in a read, the two forms
 * measured alike.
 */
function userSource(db: Kysely<Database>, key: { userId: string; sessionId: string }): CallerSource {
  return {
    from: db
      .selectFrom('users')
      .leftJoin('sessions', (join) => join.on('sessions.id', '=', key.sessionId).onRef('sessions.user_id', '=', 'users.id'))
      .leftJoinLateral(confirmedFactorOfUser, (join) => join.onTrue())
      .where('users.id', '=', key.userId),
    columns: userColumns(
      // A session an app started is only ever the app's: its token is read by appUserSource.
      sql<boolean>`(sessions.id is not null and sessions.ended_at is null and sessions.expires_at > now() and sessions.client_id is null)`,
      sql<string[] | null>`null::text[]`,
    ),
  };
}

/**
 * The caller of an app's access token (API.md section 18): the user, as userSource reads it,
 * in the session the token names, which must be the session that app started for the user; the
 * app must still exist, be enabled and be an app. The request may use the scopes both the token
 * and the app hold now (a scope taken away from the app applies at once).
 */
function appUserSource(db: Kysely<Database>, key: { userId: string; sessionId: string; clientId: string; scopes: readonly string[] }): CallerSource {
  return {
    from: db
      .selectFrom('users')
      .leftJoin('sessions', (join) => join.on('sessions.id', '=', key.sessionId).onRef('sessions.user_id', '=', 'users.id').on('sessions.client_id', '=', key.clientId))
      .leftJoin('api_clients', 'api_clients.id', 'sessions.client_id')
      .leftJoinLateral(confirmedFactorOfUser, (join) => join.onTrue())
      .where('users.id', '=', key.userId),
    columns: userColumns(
      sql<boolean>`(sessions.id is not null and sessions.ended_at is null and sessions.expires_at > now()
        and api_clients.deleted_at is null and api_clients.status = 'active' and api_clients.type <> 'service')`,
      sql<string[]>`array(select unnest(coalesce(api_clients.scopes, '{}')) intersect select unnest(${key.scopes}::text[]))`,
    ),
  };
}

const clientStale = sql<boolean>`(api_clients.last_used_at is null or api_clients.last_used_at < now() - interval '1 minute')`;

/** The columns of an API client's caller; an API client has no second factor, so the rules about factors never apply to it. */
function clientColumns(live: RawBuilder<boolean>, stale: RawBuilder<boolean>, scopes: RawBuilder<string[]>, credential: RawBuilder<string | null>): CallerSource['columns'] {
  return {
    caller__kind: sql<'client'>`'client'`,
    caller__id: sql.ref<string>('api_clients.id'),
    caller__role: sql<Role | null>`null::text`,
    caller__status: sql.ref<string>('api_clients.status'),
    caller__live: live,
    caller__stale: stale,
    caller__scopes: scopes,
    caller__rate_limit: sql.ref<number | null>('api_clients.rate_limit'),
    caller__credential: credential,
    caller__mfa_enrolled: sql<boolean>`false`,
    caller__mfa_age: sql<number | null>`null::integer`,
  };
}

/**
 * The caller of an API client's secret: the secret by its hash, beside its client. The secret
 * counts while it is not deleted nor past its `expires_at`, and its client is not deleted and is
 * a service client: an app's secret (a confidential client's) only authenticates the app when it
 * signs a user in, and never calls the API as the app itself (API.md section 18).
 */
function clientSecretSource(db: Kysely<Database>, key: { secretHash: string }): CallerSource {
  return {
    from: db
      .selectFrom('api_client_secrets')
      .innerJoin('api_clients', 'api_clients.id', 'api_client_secrets.client_id')
      .where('api_client_secrets.secret_hash', '=', key.secretHash),
    columns: clientColumns(
      sql<boolean>`(api_client_secrets.deleted_at is null and (api_client_secrets.expires_at is null or api_client_secrets.expires_at > now()) and api_clients.deleted_at is null and api_clients.type = 'service')`,
      sql<boolean>`(${clientStale} or api_client_secrets.last_used_at is null or api_client_secrets.last_used_at < now() - interval '1 minute')`,
      sql.ref<string[]>('api_clients.scopes'),
      sql.ref<string>('api_client_secrets.id'),
    ),
  };
}

/**
 * The caller of an API client's access token: the client by id. The token counts while the
 * client is not deleted, is a service client (only a service client is ever granted one: an app
 * never calls the API as itself) and still has the token generation the token was issued in (no
 * disabling since, whatever the clock says); the request may use
 * the scopes both the token and the client hold now (a scope taken away applies at once).
 */
function clientTokenSource(db: Kysely<Database>, key: { clientId: string; scopes: readonly string[]; generation: number }): CallerSource {
  return {
    from: db.selectFrom('api_clients').where('api_clients.id', '=', key.clientId),
    columns: clientColumns(
      sql<boolean>`(api_clients.deleted_at is null and api_clients.token_generation = ${key.generation}::integer and api_clients.type = 'service')`,
      clientStale,
      sql<string[]>`array(select unnest(api_clients.scopes) intersect select unnest(${key.scopes}::text[]))`,
      sql<string | null>`null::uuid`,
    ),
  };
}

/** Where the caller's row comes from, for any kind of credentials. */
function callerSource(db: Kysely<Database>, key: CallerKey): CallerSource {
  switch (key.kind) {
    case 'user':
      return userSource(db, key);
    case 'app-user':
      return appUserSource(db, key);
    case 'client-secret':
      return clientSecretSource(db, key);
    case 'client-token':
      return clientTokenSource(db, key);
  }
}

/** The caller's row for any kind of credentials, its columns as they are (CallerColumns). */
function callerOf(db: Kysely<Database>, key: CallerKey) {
  const { from, columns } = callerSource(db, key);
  return from.select([
    columns.caller__kind.as('caller__kind'),
    columns.caller__id.as('caller__id'),
    columns.caller__role.as('caller__role'),
    columns.caller__status.as('caller__status'),
    columns.caller__live.as('caller__live'),
    columns.caller__stale.as('caller__stale'),
    columns.caller__scopes.as('caller__scopes'),
    columns.caller__rate_limit.as('caller__rate_limit'),
    columns.caller__credential.as('caller__credential'),
    columns.caller__mfa_enrolled.as('caller__mfa_enrolled'),
    columns.caller__mfa_age.as('caller__mfa_age'),
  ]);
}

/**
 * What a route requires of its caller, as values: admission.ts decides on them in code, and a
 * write in one statement puts them in its statement as a condition (callerLetIn).
 */
export interface Gate {
  roles: readonly Role[];
  /** The user a route's `orSelf` parameter names, or null. */
  selfId: string | null;
  /** The scopes that open the route to API clients (any of them); none: users only. */
  scopes: readonly string[];
  /** Roles that must have a second factor to call the route (none on a route open during enrolment). */
  mfaRoles: readonly Role[];
  /** A step-up route: the most seconds since the session verified its second factor; null otherwise. */
  stepUpSeconds: number | null;
  /**
   * The scopes that open the route to an app's token: the route's own, and `account` on one of
   * the user's own routes; none on a route for direct sign-ins. (admission.ts narrows `account`
   * on an `orSelf` route to the token's own user.)
   */
  appScopes: readonly string[];
}

type AnySelect = SelectQueryBuilder<any, any, any>;

/** An age no verification has: "never verified", and "any age will do" off step-up routes. */
const NEVER = sql.lit(2147483647);

/**
 * A row of a read beside the caller: the caller's row as one JSON column (`caller__columns`), the
 * data's columns, and `caller__row`, null when there is no data row.
 */
export type BesideCaller<Row> = { caller__columns: CallerColumns; caller__row: unknown } & Partial<Row>;

/**
 * The one shape of an authenticated read: the caller's row beside the request's data, joined
 * whatever the caller is, in one statement.
 *
 *   select json_build_object(<the caller's columns>) as caller__columns, requested.*
 *   from <the caller's tables, joined>
 *   left join lateral (select <mark> as caller__row, requested_rows.* from (<the data>) as requested_rows) as requested on true
 *   where <the caller's key>
 *
 * The caller's columns decide the answer (401, 403) in admission.ts before any data is handed
 * out, as they do for every way in. The statement carries no condition of the route's rule: as a
 * join filter it did not spare reading the data (PostgreSQL read a refused caller's page and
 * dropped its rows), and its six bound values (four arrays, serialised on every call) made the
 * by-id statement about 8% slower under pgbench (bench/README.md, 2026-11-29, evening). The
 * caller's columns come back as one JSON value: pg describes and parses every column of every
 * row on its own, and eleven columns cost a read a few microseconds more of the service's CPU.
 * They are selected from the caller's own join, not from it as a derived table: PostgreSQL plans
 * the statement anew on every call behind a pooler in transaction mode, and the derived table
 * cost that planning about a tenth (bench/README.md, 2026-11-29, night). Being lateral, the data
 * query sees the caller's tables too, and a column its own tables lack would be read from the
 * caller's (`status`, `deleted_at`) instead of failing: queries/ is written by also running every
 * data query on its own (a callerRead's `alone`, each page's query), where such a column fails.
 * `ordered` keeps a page's order with a row number; a keyed read (a row by its key, or a short
 * list such as a user's factors) has the one caller row on the outer side of a nested loop, which
 * keeps its data's order as the data query gives it.
 */
export function besideCaller(db: Kysely<Database>, key: CallerKey, data: AnySelect, ordered: boolean) {
  const { from, columns } = callerSource(db, key);
  const mark = ordered ? sql<unknown>`row_number() over ()` : sql<unknown>`true`;
  const requested = db.selectFrom(data.as('requested_rows')).select(mark.as('caller__row')).selectAll('requested_rows');
  const query = from
    .leftJoinLateral(requested.as('requested'), (join) => join.onTrue())
    .select(jsonBuildObject(columns).as('caller__columns'))
    .selectAll('requested');
  return ordered ? query.orderBy('requested.caller__row') : query;
}

/**
 * The gate's condition on a caller's row (`caller.*`), for a write in one statement: live and
 * active, and the rule's roles, self or scope let it in, and it has the second factor its role
 * requires, verified recently enough on a step-up route. The admission's own rules in
 * admission.ts say the same in code.
 */
function gateLetsIn(gate: Gate) {
  return sql<boolean>`caller.caller__status = 'active' and caller.caller__live
          and (caller.caller__role = any(${gate.roles}::text[]) or caller.caller__id = ${gate.selfId}::uuid or (caller.caller__kind = 'client' and caller.caller__scopes && ${gate.scopes}::text[]))
          and (caller.caller__kind = 'client' or caller.caller__scopes is null or caller.caller__scopes && ${gate.appScopes}::text[])
          and (caller.caller__mfa_enrolled or not coalesce(caller.caller__role = any(${gate.mfaRoles}::text[]), false))
          and (not caller.caller__mfa_enrolled or coalesce(caller.caller__mfa_age, ${NEVER}) <= coalesce(${gate.stepUpSeconds}::integer, ${NEVER}))`;
}

/**
 * Whether the database lets the caller in under the gate now: the caller check as a condition a
 * write's statement puts on what it writes (a write in one statement, admission.ts). With
 * `budget`, an API client's request counted before the statement (its `count` in the window) is
 * let in only within the client's limit (its `rate_limit`, else `defaultLimit`).
 */
export function callerLetIn(db: Kysely<Database>, key: CallerKey, gate: Gate, budget?: { count: number; defaultLimit: number }): RawBuilder<boolean> {
  const withinBudget = budget ? sql<boolean>` and coalesce(caller.caller__rate_limit, ${budget.defaultLimit}::integer) >= ${budget.count}::integer` : sql<boolean>``;
  return sql<boolean>`exists (select 1 from (${callerOf(db, key)}) as caller where ${gateLetsIn(gate)}${withinBudget})`;
}

/** A keyed read whose shape never changes: `callerRead` prepares it once for each kind of caller. */
export type DataQuery<Values extends unknown[]> = (db: Kysely<Database>, ...values: Values) => AnySelect;

export interface CallerRead<Row, Values extends unknown[]> {
  /** `<area>.<what>`: names the read in queries/<area>.sql. */
  name: string;
  /** Reads the data beside the caller: the caller's row, with the data row's columns when there is one. */
  run(db: Kysely<Database>, key: CallerKey, values: Values): Promise<BesideCaller<Row>[]>;
  /** Reads the data alone, for a request whose caller an earlier statement of its own admitted. */
  alone(db: Kysely<Database>, values: Values): Promise<Row[]>;
  /** The statement as built for each kind of caller, and alone, for queries/ (values left as they come). */
  statements(db: Kysely<Database>): { user: string; appUser: string; clientSecret: string; clientToken: string; alone: string };
}

/** Every caller read of the repositories, as their modules define them: queries/ is written from these. */
export const CALLER_READS: CallerRead<unknown, never>[] = [];

/**
 * A repository's keyed read for authenticated requests (the by-id reads of the hot paths): the
 * data query beside the caller, built and compiled once (prepared-query.ts) and run with each
 * request's values. The SQL it sends is committed in queries/ and checked by a test.
 */
export function callerRead<Row, Values extends unknown[]>(name: string, data: DataQuery<Values>): CallerRead<Row, Values> {
  const forUser = (db: Kysely<Database>, userId: string, sessionId: string, ...values: Values) => besideCaller(db, { kind: 'user', userId, sessionId }, data(db, ...values), false);
  const forAppUser = (db: Kysely<Database>, userId: string, sessionId: string, clientId: string, tokenScopes: readonly string[], ...values: Values) =>
    besideCaller(db, { kind: 'app-user', userId, sessionId, clientId, scopes: tokenScopes }, data(db, ...values), false);
  const forClientSecret = (db: Kysely<Database>, secretHash: string, ...values: Values) => besideCaller(db, { kind: 'client-secret', secretHash }, data(db, ...values), false);
  const forClientToken = (db: Kysely<Database>, clientId: string, tokenScopes: readonly string[], generation: number, ...values: Values) =>
    besideCaller(db, { kind: 'client-token', clientId, scopes: tokenScopes, generation }, data(db, ...values), false);
  const dataAlone = preparedQuery((db: Kysely<Database>, ...values: Values) => data(db, ...values));
  const prepared = { user: preparedQuery(forUser), appUser: preparedQuery(forAppUser), clientSecret: preparedQuery(forClientSecret), clientToken: preparedQuery(forClientToken) };
  const sampleValues = () => (data.length > 1 ? Array.from({ length: data.length - 1 }, (_, index) => `$value${index}`) : []) as Values;
  const read: CallerRead<Row, Values> = {
    name,
    alone: (db, values) => dataAlone(db, ...values) as Promise<Row[]>,
    run: (db, key, values) => {
      switch (key.kind) {
        case 'user':
          return prepared.user(db, key.userId, key.sessionId, ...values) as never;
        case 'app-user':
          return prepared.appUser(db, key.userId, key.sessionId, key.clientId, key.scopes, ...values) as never;
        case 'client-secret':
          return prepared.clientSecret(db, key.secretHash, ...values) as never;
        case 'client-token':
          return prepared.clientToken(db, key.clientId, key.scopes, key.generation, ...values) as never;
      }
    },
    statements: (db) => ({
      user: forUser(db, '$user', '$session', ...sampleValues()).compile().sql,
      appUser: forAppUser(db, '$user', '$session', '$client', [], ...sampleValues()).compile().sql,
      clientSecret: forClientSecret(db, '$secret_hash', ...sampleValues()).compile().sql,
      clientToken: forClientToken(db, '$client', [], 0, ...sampleValues()).compile().sql,
      alone: data(db, ...sampleValues()).compile().sql,
    }),
  };
  CALLER_READS.push(read as unknown as CallerRead<unknown, never>);
  return read;
}

const userAlone = preparedQuery((db, userId: string, sessionId: string) => callerOf(db, { kind: 'user', userId, sessionId }));
const appUserAlone = preparedQuery((db, userId: string, sessionId: string, clientId: string, scopes: readonly string[]) => callerOf(db, { kind: 'app-user', userId, sessionId, clientId, scopes }));
const clientSecretAlone = preparedQuery((db, secretHash: string) => callerOf(db, { kind: 'client-secret', secretHash }));
const clientTokenAlone = preparedQuery((db, clientId: string, scopes: readonly string[], generation: number) => callerOf(db, { kind: 'client-token', clientId, scopes, generation }));

/** The caller alone, for a request whose first statement carries no data (a write's transaction). */
export function callerAlone(db: Kysely<Database>, key: CallerKey): Promise<CallerColumns[]> {
  switch (key.kind) {
    case 'user':
      return userAlone(db, key.userId, key.sessionId) as Promise<CallerColumns[]>;
    case 'app-user':
      return appUserAlone(db, key.userId, key.sessionId, key.clientId, key.scopes) as Promise<CallerColumns[]>;
    case 'client-secret':
      return clientSecretAlone(db, key.secretHash) as Promise<CallerColumns[]>;
    case 'client-token':
      return clientTokenAlone(db, key.clientId, key.scopes, key.generation) as Promise<CallerColumns[]>;
  }
}

/** A user's role and status now (a refresh asks before it rotates); a deleted user is none. */
export function findUserStanding(db: Kysely<Database>, id: string) {
  return db.selectFrom('users').select(['id', 'role', 'status']).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
}
