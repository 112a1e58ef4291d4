import type { CompiledQuery, Dialect, QueryCompiler, QueryId, RootOperationNode } from 'kysely';

/** Turns one compiled statement into another: its text and its parameters, `$n` numbered. */
export type StatementRewrite = (sql: string, parameters: readonly unknown[]) => { sql: string; parameters: unknown[] };

const pending = new WeakMap<QueryId, StatementRewrite>();

/**
 * Asks for the next compilation of the query `queryId` names to be rewritten (once). A Kysely
 * plugin calls it from `transformQuery`; rewriting the compiled text costs a string
 * concatenation where rebuilding the query's tree around it would cost a second compilation.
 */
export function rewriteWhenCompiled(queryId: QueryId, rewrite: StatementRewrite): void {
  pending.set(queryId, rewrite);
}

/** The statement as compiled, rewritten if a rewrite was asked for its query (see prepared-query). */
export function applyPendingRewrite(compiled: CompiledQuery): CompiledQuery {
  const rewrite = pending.get(compiled.queryId);
  if (!rewrite) return compiled;
  pending.delete(compiled.queryId);
  return Object.freeze({ ...compiled, ...rewrite(compiled.sql, compiled.parameters) });
}

class RewritingCompiler implements QueryCompiler {
  constructor(private readonly inner: QueryCompiler) {}

  compileQuery(node: RootOperationNode, queryId: QueryId): CompiledQuery {
    return applyPendingRewrite(this.inner.compileQuery(node, queryId));
  }
}

/** The dialect with `rewriteWhenCompiled` honoured by its compiler; everything else unchanged. */
export function withStatementRewrites(dialect: Dialect): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createDriver: () => dialect.createDriver(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createQueryCompiler: () => new RewritingCompiler(dialect.createQueryCompiler()),
  };
}
