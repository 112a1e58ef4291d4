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

class RewritingCompiler implements QueryCompiler {
  constructor(private readonly inner: QueryCompiler) {}

  compileQuery(node: RootOperationNode, queryId: QueryId): CompiledQuery {
    const compiled = this.inner.compileQuery(node, queryId);
    const rewrite = pending.get(queryId);
    if (!rewrite) return compiled;
    pending.delete(queryId);
    return Object.freeze({ ...compiled, ...rewrite(compiled.sql, compiled.parameters) });
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
