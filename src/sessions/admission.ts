import type { Kysely, RawBuilder, SelectQueryBuilder, Transaction } from 'kysely';
import type { Database, Role } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { AppError, accountSuspended, forbidden, invalidToken } from '../http/errors.js';
import type { CountedRequest } from '../http/rate-limit.js';
import { scopesOf, type AccessRule } from './access-rule.js';
import { besideCaller, callerAlone, callerLetIn, namesUser, type BesideCaller, type CallerColumns, type CallerKey, type CallerRead, type Gate } from './caller-query.js';

/** Who makes a request, once admitted. */
export interface Caller {
  kind: 'user' | 'client';
  id: string;
  /** A user's role; null for an API client. */
  role: Role | null;
  /** The session of a user's access token. */
  sessionId: string | undefined;
  /**
   * What the caller may use now: an API client's scopes, or, for a user acting through an app,
   * the scopes both its token and the app hold; null for a direct sign-in.
   */
  scopes: readonly string[] | null;
}

/** The request an admission serves, as far as the admission reads it (its host reads the rest). */
export interface AdmissionRequest {
  readonly params: unknown;
}

/** What the admission needs of the app around it: one for the app, told which request asks. */
export interface AdmissionHost {
  /** A refused credential spends its address's budget, like a request without one. */
  spendAddressBudget(request: AdmissionRequest): Promise<void>;
  /** An API client's request spends the client's own budget (its `rate_limit`, else API_RATE_LIMIT). */
  spendClientBudget(clientId: string, limit: number | null): Promise<void>;
  /** The same request counted against the client's budget before its limit is known (a write in one statement). */
  countClientRequest(clientId: string): Promise<CountedRequest>;
  /** API_RATE_LIMIT: a client's budget when it has no `rate_limit` of its own. */
  readonly defaultClientRateLimit: number;
  /** Notes the session as used (at most once a minute; see caller__stale). */
  touchSession(request: AdmissionRequest, sessionId: string): void;
  /** Notes the client, and the secret it sent, as used (at most once a minute). */
  touchClient(request: AdmissionRequest, clientId: string, secretId: string | null): void;
  /** MFA_REQUIRED_ROLES and MFA_STEP_UP_MAX_AGE. */
  readonly secondFactors: SecondFactorPolicy;
}

/** Who must have a second factor, and how fresh it must be for a step-up route. */
export interface SecondFactorPolicy {
  requiredRoles: readonly Role[];
  stepUpMaxAgeSeconds: number;
}

const withChallenge = (error: AppError) => new AppError(error.code, error.detail, undefined, { 'www-authenticate': 'Bearer error="invalid_token"' });

/** RFC 6750: the scope the client (or the app's token) lacks, named in the challenge when one would do. */
const insufficientScope = (scope: string | undefined, holder = 'This API client') =>
  new AppError('insufficient_scope', scope ? `${holder} lacks the scope ${scope}.` : `${holder} has no scope that opens this operation.`, undefined, {
    'www-authenticate': scope ? `Bearer error="insufficient_scope", scope="${scope}"` : 'Bearer error="insufficient_scope"',
  });

const APP_TOKEN = "This app's token";

const directSignInOnly = () => forbidden("This operation needs a direct sign-in: an app's token may not call it.");

const enrolmentRequired = () =>
  new AppError('mfa_enrollment_required', 'Your role requires a second factor: add one under /api/auth/mfa before anything else.');

/** RFC 9470: the session must verify its second factor again, within max_age seconds. */
const stepUpRequired = (maxAge: number) =>
  new AppError('step_up_required', `This action needs a second factor verified within the last ${maxAge} seconds: verify it with POST /api/auth/mfa/verify.`, undefined, {
    'www-authenticate': `Bearer error="insufficient_user_authentication", error_description="A second factor verified within ${maxAge} seconds is required", max_age=${maxAge}`,
  });

const NOBODY = '00000000-0000-0000-0000-000000000000';

const usersOnly = () => forbidden('This operation is for users only: API clients may not call it.');

/** What an admission gives a handler: the caller it admitted, and the database. */
export interface Admitted {
  caller: Caller;
  db: Kysely<Database>;
}

/**
 * What the admission of a route open to anyone gives (`PUBLIC`, or a `tokenOptional` route
 * called without a token): the database, and a caller only when credentials were sent to a
 * route that takes them.
 */
export interface AdmittedAnyone {
  caller: Caller | undefined;
  db: Kysely<Database>;
  /** A write in one transaction; on a route that took credentials, its caller is already admitted. */
  transaction<T>(work: (trx: Transaction<Database>) => Promise<T>): Promise<T>;
}

const publicRouteHasNoCaller = () => new Error('a public route admits anyone and has no caller: use access.anyone()');

/**
 * The one admission step, for every caller of every route: it alone holds the database for a
 * request, and gives it out only together with a caller it admitted under the route's rule
 * (`config.access`), so a handler that reaches the database before admission does not
 * type-check. The database decides every request: the caller's row is read with the request's
 * first statement, and nothing about a caller is kept in this process between requests. A
 * handler reaches the database through it in one of these ways:
 * - `read(callerRead, ...values)`: a keyed read, one statement with the caller's row beside the data;
 * - `readPage(query)`: a list, likewise, its order kept;
 * - `transaction((trx, caller) => ...)`: a write, whose transaction's first statement reads the caller's row;
 * - `admit()`: `{ caller, db }`, free after a read of this request (it reuses its decision),
 *   else one statement of its own: for work that must not hold a connection between a read and a
 *   write (argon2, DNS), and for the caller after a read;
 * - `anyone()`: on a route open to anyone, `{ caller (if any), db, transaction }`;
 * - `oneStatement(write)`: the flash sale's reservation, a write in one statement outside any
 *   transaction, the caller check a condition in the statement itself (the one exception,
 *   benchmarked, used in inventory/reservation-routes.ts only).
 * The rules (401, 403 and their order) are applied in `decide`, to the caller's row however it
 * was read, so every way answers alike. Callers are users (an access token of a session) or API
 * clients (a secret, or an access token of the client credentials grant).
 */
export class Access {
  #caller: Caller | undefined;
  #decision: Promise<Caller> | undefined;
  /** Who a write in one statement wrote as: the database let it in with that statement, whose row was not read. */
  #wroteAs: { type: 'user' | 'client'; id: string } | undefined;
  #budgetSpent = false;
  /** An API client's request counted before a write in one statement, judged once its limit is read. */
  #counted: CountedRequest | undefined;

  /** Held here only (a `#` field: not even a bracketed name reaches it from outside). */
  readonly #database: Kysely<Database>;
  /** The credentials' caller, before the database has agreed; undefined on a public route. */
  readonly #key: CallerKey | undefined;

  constructor(
    database: Kysely<Database>,
    readonly rule: AccessRule,
    key: CallerKey | undefined,
    private readonly host: AdmissionHost,
    /** Its `orSelf` parameter is read once the request's parameters are valid. */
    private readonly request: AdmissionRequest,
  ) {
    this.#database = database;
    this.#key = key;
  }

  /** Whether the caller has been admitted (a public route is, from the start). For the hooks of authenticate.ts. */
  get admitted(): boolean {
    return this.rule.public === true || this.#caller !== undefined || this.#wroteAs !== undefined;
  }

  /**
   * The user whose credentials these are, known before admission and without the database: the
   * key of a read of the caller's own account (`access.read(userById, access.ownUserId)`), which
   * the read's own admission then checks. An API client's credentials name no user: this is
   * then an id nobody has, and the admission refuses the client all the same.
   */
  get ownUserId(): string {
    return this.#key && namesUser(this.#key) ? this.#key.userId : NOBODY;
  }

  /**
   * Who changes what this request changes, for its events (`contextOf(request)`): read only
   * inside or after a write, that is once the caller is admitted; none on a public route.
   */
  get actor(): { type: 'user' | 'client'; id: string } | undefined {
    if (this.rule.public) return undefined;
    if (this.#wroteAs) return this.#wroteAs;
    if (!this.#caller) throw new Error('the actor of a request is known once its caller is admitted: read it inside the write');
    return { type: this.#caller.kind, id: this.#caller.id };
  }

  private gate(): Gate {
    const selfId = this.rule.orSelf ? ((this.request.params as Record<string, string | undefined>)[this.rule.orSelf]?.toLowerCase() ?? null) : null;
    const policy = this.host.secondFactors;
    const scopes = scopesOf(this.rule);
    return {
      roles: this.rule.roles ?? [],
      selfId,
      scopes,
      mfaRoles: this.rule.duringEnrolment ? [] : policy.requiredRoles,
      stepUpSeconds: this.rule.stepUp ? policy.stepUpMaxAgeSeconds : null,
      appScopes: this.rule.directSignInOnly ? [] : this.rule.appTokenScope ? [this.rule.appTokenScope] : this.rule.account ? [...scopes, 'account'] : scopes,
    };
  }

  /** A keyed read beside the caller (callerRead in a repository): the data rows, for an admitted caller. */
  async read<Row, Values extends unknown[]>(query: CallerRead<Row, Values>, ...values: Values): Promise<Row[]> {
    if (this.admitted) return query.alone(this.#database, values);
    const rows = await query.run(this.#database, this.#key!, values);
    this.#decision ??= this.decide(rows[0]?.caller__columns);
    await this.#decision;
    return this.dataOf(rows);
  }

  /** A page (or any read whose shape changes with the request) beside the caller, its order kept. */
  async readPage<Row>(query: (db: Kysely<Database>) => SelectQueryBuilder<any, any, Row>): Promise<Row[]> {
    if (this.admitted) return query(this.#database).execute() as Promise<Row[]>;
    const rows = (await besideCaller(this.#database, this.#key!, query(this.#database), true).execute()) as BesideCaller<Row>[];
    this.#decision ??= this.decide(rows[0]?.caller__columns);
    await this.#decision;
    return this.dataOf(rows);
  }

  /**
   * A write: the transaction's first statement reads the caller's row (unless a read of this
   * request has admitted it), so a refused caller's transaction rolls back before anything is
   * written. A change of the caller committed before that statement refuses the write; one
   * committed after it is concurrent with the write, which a service orders by the rows it locks.
   */
  transaction<T>(work: (trx: Transaction<Database>, caller: Caller) => Promise<T>): Promise<T> {
    if (this.rule.public) return Promise.reject(publicRouteHasNoCaller());
    return inTransaction(this.#database, async (trx) => work(trx, await this.admitWith(trx)));
  }

  /**
   * A write that is one statement, outside any transaction, so that no lock it takes outlasts it
   * (a hot variant's row in a flash sale: bench/README.md). The database checks the caller in that
   * statement: `write` takes the caller check as a condition (`letIn()`) that everything its
   * statement writes must depend on, so a caller the database refuses now writes nothing, and
   * `actor`, whom the statement writes as. `write` answers undefined when it wrote nothing (its
   * statement refused by that condition or its own, or no statement tried), and so does this:
   * the route then does the write in a transaction, whose first statement reads the caller's row
   * and answers for every refusal. The caller's budget is spent before anything is written: a
   * user's with its credentials (authenticate.ts), an API client's token's counted here and
   * judged by the statement against the client's limit (a 429 writes nothing). A client's secret
   * names its client only once the database is asked, so its writes take the transaction. The
   * caller's use is noted once the write went through.
   */
  async oneStatement<T>(write: (db: Kysely<Database>, letIn: () => RawBuilder<boolean>, actor: { type: 'user' | 'client'; id: string }) => Promise<T | undefined>): Promise<T | undefined> {
    const key = this.#key;
    // An `account` route narrows an app's `account` to its own user in code only (the statement's
    // condition binds the route's self once), so such a route writes in a transaction.
    if (this.admitted || this.rule.public || this.rule.account || !key || key.kind === 'client-secret' || this.#decision) return undefined;
    if (key.kind === 'client-token') this.#counted ??= await this.host.countClientRequest(key.clientId);
    const gate = this.gate();
    const budget = this.#counted && { count: this.#counted.count, defaultLimit: this.host.defaultClientRateLimit };
    const actor = namesUser(key) ? { type: 'user' as const, id: key.userId } : { type: 'client' as const, id: key.clientId };
    const written = await write(this.#database, () => callerLetIn(this.#database, key, gate, budget), actor);
    if (written === undefined) return undefined;
    this.#wroteAs = actor;
    // Its use noted: a statement each time (nothing of the caller's last use is kept here), which
    // writes the row at most once a minute by its own condition, and is not waited for.
    if (namesUser(key)) this.host.touchSession(this.request, key.sessionId);
    else this.host.touchClient(this.request, key.clientId, null);
    return written;
  }

  /**
   * The admitted caller and the database: free when a read of this request admitted the caller
   * (its decision is reused), else the caller checked by a statement of its own. Not on a public
   * route, which has no caller (`anyone()`).
   */
  async admit(): Promise<Admitted> {
    if (this.rule.public) throw publicRouteHasNoCaller();
    return { caller: await this.admitWith(this.#database), db: this.#database };
  }

  /**
   * A route open to anyone: the database, and the caller when credentials were sent to a
   * `tokenOptional` route (admitted first, under the rest of its rule).
   */
  async anyone(): Promise<AdmittedAnyone> {
    // Elsewhere its transaction would not read the caller first: a route with a rule uses the others.
    if (!this.rule.public && !this.rule.tokenOptional) throw new Error('anyone() is for a route open to anyone (PUBLIC or tokenOptional): use transaction(), read() or admit()');
    const caller = this.rule.public ? undefined : await this.admitWith(this.#database);
    const database = this.#database;
    return { caller, db: database, transaction: (work) => inTransaction(database, work) };
  }

  /** The caller's decision, made once a request: by the statement of a read, else by `db` here. */
  private admitWith(db: Kysely<Database>): Promise<Caller> {
    this.#decision ??= callerAlone(db, this.#key!).then((rows) => this.decide(rows[0]));
    return this.#decision;
  }

  /** The data of a read beside the caller: the rows that carry data, without the caller. */
  private dataOf<Row>(rows: BesideCaller<Row>[]): Row[] {
    const data: Row[] = [];
    for (const { caller__columns: _caller, caller__row: mark, ...row } of rows) if (mark !== null && mark !== undefined) data.push(row as Row);
    return data;
  }

  /**
   * The rules, in the order API.md gives them: credentials that name nobody now (a deleted user,
   * an ended session; an unknown, deleted or expired secret, a disabled or deleted client) are 401;
   * a suspended user 403 `account_suspended` (the suspension ended every session; while it lasts
   * the answer says so); a user whose role requires a second factor and who has none 403
   * `mfa_enrollment_required` (unless the route is open during enrolment); a role the rule does
   * not allow 403 `forbidden`; an API client on a route for users only 403 `forbidden`, and one
   * without the route's scope 403 `insufficient_scope`; on a step-up route, a user with a factor
   * whose session has not verified it within MFA_STEP_UP_MAX_AGE 403 `step_up_required`.
   */
  private async decide(row: CallerColumns | undefined): Promise<Caller> {
    let refusal: AppError | undefined;
    if (!row) refusal = withChallenge(invalidToken());
    else if (row.caller__kind === 'user' && row.caller__status === 'suspended') refusal = accountSuspended();
    else if (!row.caller__live || row.caller__status !== 'active') refusal = withChallenge(invalidToken());
    if (refusal) {
      await this.host.spendAddressBudget(this.request);
      throw refusal;
    }
    const admitted = row!;
    if (admitted.caller__kind === 'client') await this.spendClientBudget(admitted);
    this.authorize(admitted);
    if (admitted.caller__stale) this.touch(admitted);
    return this.admitAs(admitted);
  }

  /** A client's request spends its budget once, however many times its row is read. */
  private async spendClientBudget(row: CallerColumns): Promise<void> {
    if (this.#budgetSpent) return;
    this.#budgetSpent = true;
    // Counted before a write in one statement that wrote nothing: judged now that the limit is read.
    if (this.#counted) this.#counted.within(row.caller__rate_limit ?? this.host.defaultClientRateLimit);
    else await this.host.spendClientBudget(row.caller__id, row.caller__rate_limit);
  }

  private touch(row: CallerColumns): void {
    if (this.#key && namesUser(this.#key)) this.host.touchSession(this.request, this.#key.sessionId);
    else this.host.touchClient(this.request, row.caller__id, row.caller__credential);
  }

  /**
   * An app's token (API.md section 18) calls a route only within its scopes: a scope of section
   * 11 that opens the route (the user's role is checked after), or `account` on one of the user's
   * own routes (on an `orSelf` route, for its user only). A route for direct sign-ins refuses it
   * whatever its scopes.
   */
  private authorizeApp(userId: string, tokenScopes: readonly string[], gate: Gate): void {
    if (this.rule.directSignInOnly) throw directSignInOnly();
    if (this.rule.appTokenScope) {
      if (tokenScopes.includes(this.rule.appTokenScope)) return;
      throw insufficientScope(this.rule.appTokenScope, APP_TOKEN);
    }
    if (gate.scopes.some((scope) => tokenScopes.includes(scope))) return;
    if (this.rule.account && tokenScopes.includes('account') && (gate.selfId === null || gate.selfId === userId)) return;
    throw insufficientScope(gate.scopes[0] ?? (this.rule.account ? 'account' : undefined), APP_TOKEN);
  }

  private admitAs(row: CallerColumns): Caller {
    this.#caller = {
      kind: row.caller__kind,
      id: row.caller__id,
      role: row.caller__role,
      sessionId: this.#key && namesUser(this.#key) ? this.#key.sessionId : undefined,
      scopes: row.caller__scopes,
    };
    return this.#caller;
  }

  /**
   * The rule's roles (or self) and second factor for a user, and first, for a user acting
   * through an app, the scopes its token may use; its scopes for an API client.
   */
  private authorize(caller: CallerColumns): void {
    const gate = this.gate();
    if (caller.caller__kind === 'client') {
      if (gate.scopes.length === 0) throw usersOnly();
      if (!gate.scopes.some((scope) => caller.caller__scopes?.includes(scope))) throw insufficientScope(gate.scopes[0]!);
      return;
    }
    if (caller.caller__scopes !== null) this.authorizeApp(caller.caller__id, caller.caller__scopes, gate);
    // A route for an app's token (userinfo) answers no direct sign-in: its token carries no scope at all.
    else if (this.rule.appTokenScope) throw insufficientScope(this.rule.appTokenScope, "A direct sign-in's token");
    if (!caller.caller__mfa_enrolled && caller.caller__role !== null && gate.mfaRoles.includes(caller.caller__role)) throw enrolmentRequired();
    const allowed = (caller.caller__role !== null && gate.roles.includes(caller.caller__role)) || (gate.selfId !== null && caller.caller__id === gate.selfId);
    if (!allowed) throw forbidden();
    if (gate.stepUpSeconds !== null && caller.caller__mfa_enrolled && (caller.caller__mfa_age === null || caller.caller__mfa_age > gate.stepUpSeconds)) {
      throw stepUpRequired(gate.stepUpSeconds);
    }
  }
}
