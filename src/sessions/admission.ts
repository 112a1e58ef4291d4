import type { Kysely, RawBuilder, SelectQueryBuilder, Transaction } from 'kysely';
import type { Database, Role } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { AppError, accountSuspended, forbidden, invalidToken } from '../http/errors.js';
import { scopesOf, type AccessRule } from './access-rule.js';
import { besideCaller, callerAlone, callerLetIn, callerOf, type CallerColumns, type CallerKey, type CallerRead, type Gate } from './caller-query.js';
import { rowNow, takeTouchDue, type KnownCaller, type KnownCallers } from './known-callers.js';

/** Who makes a request, once admitted. */
export interface Caller {
  kind: 'user' | 'client';
  id: string;
  /** A user's role; null for an API client. */
  role: Role | null;
  /** The session of a user's access token. */
  sessionId: string | undefined;
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
  /** Notes the session as used (at most once a minute; see caller__stale). */
  touchSession(request: AdmissionRequest, sessionId: string): void;
  /** Notes the client, and the secret it sent, as used (at most once a minute). */
  touchClient(request: AdmissionRequest, clientId: string, secretId: string | null): void;
  /** MFA_REQUIRED_ROLES and MFA_STEP_UP_MAX_AGE. */
  readonly secondFactors: SecondFactorPolicy;
  /** The callers this instance admitted, current until a change of theirs is notified. */
  readonly knownCallers: KnownCallers;
}

/** Who must have a second factor, and how fresh it must be for a step-up route. */
export interface SecondFactorPolicy {
  requiredRoles: readonly Role[];
  stepUpMaxAgeSeconds: number;
}

const withChallenge = (error: AppError) => new AppError(error.code, error.detail, undefined, { 'www-authenticate': 'Bearer error="invalid_token"' });

/** RFC 6750: the scope the client lacks, named in the challenge. */
const insufficientScope = (scope: string) =>
  new AppError('insufficient_scope', `This API client lacks the scope ${scope}.`, undefined, {
    'www-authenticate': `Bearer error="insufficient_scope", scope="${scope}"`,
  });

const enrolmentRequired = () =>
  new AppError('mfa_enrollment_required', 'Your role requires a second factor: add one under /api/auth/mfa before anything else.');

/** RFC 9470: the session must verify its second factor again, within max_age seconds. */
const stepUpRequired = (maxAge: number) =>
  new AppError('step_up_required', `This action needs a second factor verified within the last ${maxAge} seconds: verify it with POST /api/auth/mfa/verify.`, undefined, {
    'www-authenticate': `Bearer error="insufficient_user_authentication", error_description="A second factor verified within ${maxAge} seconds is required", max_age=${maxAge}`,
  });

const NOBODY = '00000000-0000-0000-0000-000000000000';

const usersOnly = () => forbidden('This operation is for users only: API clients may not call it.');

/**
 * The one admission step, for every caller of every route: it alone holds the database for a
 * request, and lends it only once the caller is admitted under the route's rule (`config.access`).
 * A handler reaches the database through it in one of five ways:
 * - `read(callerRead, ...values)`: a keyed read, one statement with the caller's row beside the data;
 * - `readPage(query)`: a list, likewise, its order kept;
 *   (both read the data alone for a caller this instance knows: see `readAsKnown`)
 * - `transaction(work)`: a write, whose transaction's first statement checks the caller (none
 *   for a caller this instance knows, once the transaction has begun: see `transaction`);
 * - `oneStatement(write)`: a write that is one statement, outside any transaction, for a caller
 *   this instance knows, the caller check a condition in the statement itself;
 * - `admit()`, then `db`: the caller checked on its own, for work that must not hold a
 *   connection between a read and a write (argon2, DNS).
 * The rules (401, 403 and their order) are applied in `decide`, to the caller's row however it
 * was read, so every way answers alike. Callers are users (an access token of a session) or API
 * clients (a secret, or an access token of the client credentials grant).
 */
export class Access {
  #caller: Caller | undefined;
  #decision: Promise<Caller> | undefined;
  /** A write in one statement wrote nothing: the transaction after it reads the caller's row. */
  #readCallerRow = false;
  #budgetSpent = false;

  constructor(
    private readonly database: Kysely<Database>,
    readonly rule: AccessRule,
    /** The credentials' caller; undefined on a public route. */
    readonly key: CallerKey | undefined,
    private readonly host: AdmissionHost,
    /** Its `orSelf` parameter is read once the request's parameters are valid. */
    private readonly request: AdmissionRequest,
  ) {}

  /** Whether the caller has been admitted (a public route is, from the start). */
  get admitted(): boolean {
    return this.rule.public === true || this.#caller !== undefined;
  }

  /** The admitted caller. */
  get caller(): Caller {
    if (!this.#caller) throw new Error('the caller has not been admitted yet: read through the admission first');
    return this.#caller;
  }

  /** The admitted caller's id (a user's, or an API client's). */
  get callerId(): string {
    return this.caller.id;
  }

  /**
   * The user whose credentials these are, known before admission, for a route of the caller's own
   * account (users only). An API client's credentials name no user: this is then an id nobody
   * has, and the admission refuses the client all the same.
   */
  get ownUserId(): string {
    return this.key?.kind === 'user' ? this.key.userId : NOBODY;
  }

  /** Who changes what this request changes, for its events: the admitted caller (none on a public route). */
  get actor(): { type: 'user' | 'client'; id: string } | undefined {
    if (this.rule.public) return undefined;
    return { type: this.caller.kind, id: this.caller.id };
  }

  /** The database, for an admitted caller (or a public route) only. */
  get db(): Kysely<Database> {
    if (!this.admitted) throw new Error('the caller has not been admitted yet: read through the admission first');
    return this.database;
  }

  private gate(): Gate {
    const selfId = this.rule.orSelf ? ((this.request.params as Record<string, string | undefined>)[this.rule.orSelf]?.toLowerCase() ?? null) : null;
    const policy = this.host.secondFactors;
    return {
      roles: this.rule.roles ?? [],
      selfId,
      scopes: scopesOf(this.rule),
      mfaRoles: this.rule.duringEnrolment ? [] : policy.requiredRoles,
      stepUpSeconds: this.rule.stepUp ? policy.stepUpMaxAgeSeconds : null,
    };
  }

  /** A keyed read beside the caller (callerRead in a repository): the data rows, for an admitted caller. */
  async read<Row, Values extends unknown[]>(query: CallerRead<Row, Values>, ...values: Values): Promise<Row[]> {
    if (this.admitted) return query.alone(this.database, values);
    const known = await this.readAsKnown(() => query.alone(this.database, values));
    if (known) return known;
    const mark = this.host.knownCallers.mark();
    const rows = await query.run(this.database, this.key!, this.gate(), values);
    this.#decision ??= this.decide(rows[0], mark);
    await this.#decision;
    return this.dataOf(rows as unknown as Record<string, unknown>[]);
  }

  /** A page (or any read whose shape changes with the request) beside the caller, its order kept. */
  async readPage<Row>(query: (db: Kysely<Database>) => SelectQueryBuilder<any, any, Row>): Promise<Row[]> {
    if (this.admitted) return query(this.database).execute() as Promise<Row[]>;
    const known = await this.readAsKnown(() => query(this.database).execute() as Promise<Row[]>);
    if (known) return known;
    const mark = this.host.knownCallers.mark();
    const rows = (await besideCaller(this.database, callerOf(this.database, this.key!), this.gate(), query(this.database), true).execute()) as CallerColumns[];
    this.#decision ??= this.decide(rows[0], mark);
    await this.#decision;
    return this.dataOf(rows as unknown as Record<string, unknown>[]);
  }

  /**
   * A read without the caller's row, for a caller this instance knows and whose known row lets it
   * in here: the data is read alone (one statement outside any transaction), and used only if the
   * caller is still known once it is in, since PostgreSQL delivers the notification of any change
   * committed before the statement ended ahead of its rows (known-callers.ts). Undefined when the
   * caller is unknown, refused by its known row, or changed meanwhile: the read goes beside the
   * caller's row, which the database answers for.
   */
  private async readAsKnown<Row>(readData: () => Promise<Row[]>): Promise<Row[] | undefined> {
    if (this.admitted || !this.key) return undefined;
    const callers = this.host.knownCallers;
    const known = callers.get(this.key);
    if (!known || !this.lets(rowNow(known))) return undefined;
    const rows = await readData();
    if (!callers.isCurrent(known)) return undefined;
    this.#decision ??= this.admitKnown(known);
    await this.#decision;
    return rows;
  }

  /**
   * A write: the transaction's first statement checks the caller (unless a read of this request
   * has admitted it), so a refused caller's transaction rolls back before anything is written.
   * A caller this instance knows, whose known row lets it in, needs no statement: the transaction
   * has begun on a listening connection, and PostgreSQL hands that connection the notifications
   * of every change committed before its BEGIN ahead of BEGIN's answer (the connection was idle,
   * or ending its last transaction, when they were sent; change-feed.ts). A change committed
   * before the write began has made the caller unknown by now, and the caller is read as before;
   * one committed after it is concurrent with the write, as it would be with the caller's row
   * read by the first statement.
   */
  transaction<T>(work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    return inTransaction(this.database, async (trx) => {
      if (!this.admitted) await (this.admitKnownInTransaction() ?? this.admitWith(trx));
      return work(trx);
    });
  }

  /**
   * A write that is one statement, outside any transaction, so that no lock it takes outlasts it
   * (a hot variant's row in a flash sale: bench/README.md). Only for a caller this instance knows
   * and whose known row lets it in; and since no BEGIN has brought the connection's notifications
   * in first (see `transaction`), the database checks the caller too: `write` takes the caller
   * check as a condition (`letIn()`) that everything its statement writes must depend on, so a
   * caller the database refuses now writes nothing. `write` answers undefined when it wrote
   * nothing (its statement refused by that condition or its own, or no statement tried), and so
   * does this, as for a caller it does not know: the route then does the write in a transaction,
   * which answers for every refusal. Once a statement has taken the condition and written
   * nothing, the admission as known is undone, so that transaction's first statement reads the
   * caller's row: the database, not this instance's memory, says why nothing was written. The
   * caller's budget is spent before anything is written (a 429 writes nothing), and its use
   * noted only once the write went through.
   */
  async oneStatement<T>(write: (db: Kysely<Database>, letIn: () => RawBuilder<boolean>) => Promise<T | undefined>): Promise<T | undefined> {
    if (this.admitted || this.rule.public || !this.key || this.#decision) return undefined;
    const known = this.host.knownCallers.get(this.key);
    if (!known || !this.lets(rowNow(known))) return undefined;
    const key = this.key;
    this.#decision = this.admitKnown(known, { noteUse: false });
    await this.#decision;
    let tried = false;
    const written = await write(this.database, () => {
      tried = true;
      return callerLetIn(this.database, key, this.gate());
    });
    if (written !== undefined) {
      if (takeTouchDue(known)) this.touch(known.row);
    } else if (tried) {
      this.#caller = undefined;
      this.#decision = undefined;
      this.#readCallerRow = true;
    }
    return written;
  }

  /** In a transaction that has begun: the known caller admitted without a statement; undefined: read its row. */
  private admitKnownInTransaction(): Promise<Caller> | undefined {
    if (this.rule.public || !this.key || this.#decision || this.#readCallerRow) return undefined;
    const known = this.host.knownCallers.get(this.key);
    if (!known || !this.lets(rowNow(known))) return undefined;
    this.#decision = this.admitKnown(known);
    return this.#decision;
  }

  /** The caller checked by a statement of its own (once a request), before work that needs it. */
  async admit(): Promise<void> {
    await this.admitWith(this.database);
  }

  private admitWith(db: Kysely<Database>): Promise<Caller | undefined> {
    if (this.rule.public) return Promise.resolve(undefined);
    if (!this.#decision) {
      const mark = this.host.knownCallers.mark();
      this.#decision = callerAlone(db, this.key!).then((rows) => this.decide(rows[0], mark));
    }
    return this.#decision;
  }

  /** The data of a fused read: the rows that carry data, without the caller's columns. */
  private dataOf<Row>(rows: Record<string, unknown>[]): Row[] {
    const data: Row[] = [];
    for (const row of rows) {
      if (row.caller__row === null || row.caller__row === undefined) continue;
      const kept: Record<string, unknown> = {};
      for (const column in row) if (!column.startsWith('caller__')) kept[column] = row[column];
      data.push(kept as Row);
    }
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
  private async decide(row: CallerColumns | undefined, mark?: number): Promise<Caller> {
    if (row && this.key && mark !== undefined) this.host.knownCallers.remember(this.key, row, mark);
    let refusal: AppError | undefined;
    if (!row) refusal = withChallenge(invalidToken());
    else if (row.caller__kind === 'user' && row.caller__status === 'suspended') refusal = accountSuspended();
    else if (!row.caller__live || row.caller__status !== 'active') refusal = withChallenge(invalidToken());
    if (refusal) {
      // Known here until a notification says otherwise, had the notification not come yet.
      if (this.key) this.host.knownCallers.forgetKey(this.key);
      await this.host.spendAddressBudget(this.request);
      throw refusal;
    }
    const admitted = row!;
    if (admitted.caller__kind === 'client') await this.spendClientBudget(admitted);
    this.authorize(admitted);
    if (admitted.caller__stale) this.touch(admitted);
    return this.admitAs(admitted);
  }

  /** A known caller whose row lets it in: its budget, its use noted when due (unless the caller notes it), and it is the caller. */
  private async admitKnown(known: KnownCaller, options: { noteUse: boolean } = { noteUse: true }): Promise<Caller> {
    const row = known.row;
    if (row.caller__kind === 'client') await this.spendClientBudget(row);
    if (options.noteUse && takeTouchDue(known)) this.touch(row);
    return this.admitAs(row);
  }

  /** A client's request spends its budget once, however many times its row is read. */
  private async spendClientBudget(row: CallerColumns): Promise<void> {
    if (this.#budgetSpent) return;
    this.#budgetSpent = true;
    await this.host.spendClientBudget(row.caller__id, row.caller__rate_limit);
  }

  private touch(row: CallerColumns): void {
    if (this.key?.kind === 'user') this.host.touchSession(this.request, this.key.sessionId);
    else this.host.touchClient(this.request, row.caller__id, row.caller__credential);
  }

  private admitAs(row: CallerColumns): Caller {
    this.#caller = {
      kind: row.caller__kind,
      id: row.caller__id,
      role: row.caller__role,
      sessionId: this.key?.kind === 'user' ? this.key.sessionId : undefined,
    };
    return this.#caller;
  }

  /** Whether a live, active caller's row lets it in under this route's rule (no refusal to tell). */
  private lets(row: CallerColumns): boolean {
    try {
      this.authorize(row);
      return true;
    } catch {
      return false;
    }
  }

  /** The rule's roles (or self) and second factor for a user; its scopes for an API client. */
  private authorize(caller: CallerColumns): void {
    const gate = this.gate();
    if (caller.caller__kind === 'client') {
      if (gate.scopes.length === 0) throw usersOnly();
      if (!gate.scopes.some((scope) => caller.caller__scopes?.includes(scope))) throw insufficientScope(gate.scopes[0]!);
      return;
    }
    if (!caller.caller__mfa_enrolled && caller.caller__role !== null && gate.mfaRoles.includes(caller.caller__role)) throw enrolmentRequired();
    const allowed = (caller.caller__role !== null && gate.roles.includes(caller.caller__role)) || (gate.selfId !== null && caller.caller__id === gate.selfId);
    if (!allowed) throw forbidden();
    if (gate.stepUpSeconds !== null && caller.caller__mfa_enrolled && (caller.caller__mfa_age === null || caller.caller__mfa_age > gate.stepUpSeconds)) {
      throw stepUpRequired(gate.stepUpSeconds);
    }
  }
}
