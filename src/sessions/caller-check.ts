import { SelectQueryNode, type Kysely, type KyselyPlugin, type PluginTransformQueryArgs, type PluginTransformResultArgs, type QueryResult, type RootOperationNode, type UnknownRow } from 'kysely';
import { rewriteWhenCompiled } from '../db/statement-rewrites.js';
import type { Database, Role } from '../db/tables.js';
import { callerQuery, findCallerWithSession, toCallerWithSession, type Caller, type CallerColumns, type CallerWithSession } from './caller-repository.js';

/** Refuses (throws) or admits the caller the database returned; undefined: no such user. */
export type Admission = (caller: CallerWithSession | undefined) => Promise<Caller>;

// Non-null on every row the query returned, null on the caller's row alone (no data, or refused).
const ROW_MARK = 'caller__row';
const CALLER_COLUMNS = new Set(['caller__role', 'caller__status', 'caller__session_open', 'caller__session_stale', ROW_MARK]);
const USER_MARK = '00000000-0000-4000-8000-00000000000a';
const SESSION_MARK = '00000000-0000-4000-8000-00000000000b';

let callerTemplate: { sql: string; parameters: readonly unknown[] } | undefined;
// Statements are a small fixed set of texts (one per query shape and role rule), so each is
// wrapped once; the bound only guards against an unforeseen source of distinct texts.
const wrappedStatements = new Map<string, string>();
const MOST_WRAPPED_STATEMENTS = 1000;

/**
 * The caller check that travels with a request's data, so an authenticated read is one
 * statement, and a write checks its caller in its transaction's first statement (the SELECT
 * that locks the row it changes): the first SELECT made through the request's `db` is sent as
 *
 *   select caller.*, requested.* from (<caller by id, with the session>) as caller
 *   left join lateral (select row_number() over () as mark, requested_rows.* from (<the query>) as requested_rows) as requested
 *     on <the caller is active, the session open, the role allowed>
 *   order by requested.mark
 *
 * The data is read only for a caller the rules admit; the rules themselves (401, 403, in that
 * order) are applied to the caller's columns by `admit`, before the handler sees any row, so a
 * refused caller gets the same answer as with a statement of its own (403 before 404) and never
 * the data; a write's transaction then rolls back. No other kind of statement may go first. The
 * row number keeps the order of a query that sets one; a query that sets none (a keyed lookup)
 * has no order to keep, and gets a constant mark instead: the window and the sort took about a
 * sixth of such a read's time in the database (bench/README.md). The wrapping is done on the compiled
 * text (`rewriteWhenCompiled`): the caller's part is compiled once, then renumbered.
 */
export class CallerCheck implements KyselyPlugin {
  private readonly wrapped = new Set<string>();
  private admitted: Promise<Caller> | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    readonly identity: { userId: string; sessionId: string },
    private readonly roles: readonly Role[] | undefined,
    private readonly admit: Admission,
  ) {}

  /** Checks the caller with a statement of its own unless a query has carried the check already. */
  ensure(): Promise<Caller> {
    this.admitted ??= findCallerWithSession(this.db, this.identity.userId, this.identity.sessionId).then(this.admit);
    return this.admitted;
  }

  transformQuery({ node, queryId }: PluginTransformQueryArgs): RootOperationNode {
    if (this.admitted) return node;
    // A write before the check would be a write by a caller nobody has admitted yet.
    if (!SelectQueryNode.is(node)) throw new Error(`the caller must be checked before a ${node.kind}: make a SELECT the route's first query`);
    this.wrapped.add(queryId.queryId);
    const ordered = node.orderBy !== undefined;
    rewriteWhenCompiled(queryId, (sql, parameters) => this.withCaller(sql, parameters, ordered));
    return node;
  }

  async transformResult({ queryId, result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    if (!this.wrapped.delete(queryId.queryId)) return result;
    const rows = result.rows as (UnknownRow & CallerColumns)[];
    const first = rows[0];
    this.admitted ??= this.admit(first && toCallerWithSession(first, this.identity.userId, this.identity.sessionId));
    await this.admitted;
    const data = rows
      .filter((row) => row[ROW_MARK] !== null)
      .map((row) => {
        const kept: UnknownRow = {};
        for (const column in row) if (!CALLER_COLUMNS.has(column)) kept[column] = row[column];
        return kept;
      });
    return { ...result, rows: data };
  }

  private withCaller(sql: string, parameters: readonly unknown[], ordered: boolean): { sql: string; parameters: unknown[] } {
    callerTemplate ??= callerQuery(this.db, USER_MARK, SESSION_MARK).compile();
    const callerParameters = callerTemplate.parameters.map((value) => (value === USER_MARK ? this.identity.userId : value === SESSION_MARK ? this.identity.sessionId : value));
    const key = `${this.roles?.join(',') ?? ''}\n${sql}`;
    let wrapped = wrappedStatements.get(key);
    if (wrapped === undefined) {
      wrapped = wrapStatement(sql, parameters.length, callerTemplate.sql, this.roles, ordered);
      if (wrappedStatements.size >= MOST_WRAPPED_STATEMENTS) wrappedStatements.clear();
      wrappedStatements.set(key, wrapped);
    }
    return { sql: wrapped, parameters: [...parameters, ...callerParameters] };
  }
}

function wrapStatement(sql: string, parameterCount: number, callerSql: string, roles: readonly Role[] | undefined, ordered: boolean): string {
  const renumbered = callerSql.replace(/\$(\d+)/g, (_, position: string) => `$${parameterCount + Number(position)}`);
  // Roles are the route's own constants, never input.
  const roleRule = roles ? `and caller.caller__role in (${roles.map((role) => `'${role.replace(/[^a-z]/g, '')}'`).join(', ')})` : '';
  const [mark, order] = ordered ? ['row_number() over ()', ` order by requested.${ROW_MARK}`] : ['true', ''];
  return (
    `select caller.*, requested.* from (${renumbered}) as caller ` +
    `left join lateral (select ${mark} as ${ROW_MARK}, requested_rows.* from (${sql}) as requested_rows) as requested ` +
    `on caller.caller__status = 'active' and caller.caller__session_open ${roleRule}${order}`
  );
}
