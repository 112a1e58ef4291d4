import { createQueryId, type CompiledQuery, type Compilable, type Kysely, type OperationNodeSource, type RootOperationNode } from 'kysely';
import { applyPendingRewrite } from './statement-rewrites.js';
import type { Database } from './tables.js';

interface Template {
  node: RootOperationNode;
  sql: string;
  parameters: readonly unknown[];
  /** For each parameter, the index of the value it takes, or -1 for a constant of the query. */
  sources: number[];
}

/**
 * A hot query whose shape never changes, built and compiled by Kysely once instead of on every
 * call (building and compiling took a tenth of a keyed read's CPU in the profile). `build`
 * receives stand-ins for the values and must pass them through as they are; each call binds
 * the real ones. The query still goes through the plugins of the `db` it runs on, so a request's
 * caller check travels with it as with any other query.
 */
export function preparedQuery<Row>(build: (db: Kysely<Database>, ...values: string[]) => Compilable<Row> & OperationNodeSource) {
  let template: Template | undefined;
  return async (db: Kysely<Database>, ...values: string[]): Promise<Row[]> => {
    template ??= compileTemplate(db, build, values.length);
    const executor = db.getExecutor();
    const queryId = createQueryId();
    const node = executor.transformQuery(template.node, queryId);
    const parameters = template.sources.map((source, index) => (source === -1 ? template!.parameters[index] : values[source]));
    const compiled: CompiledQuery =
      node === template.node
        ? applyPendingRewrite({ query: node, queryId, sql: template.sql, parameters })
        : // A plugin changed the query itself: it is compiled as it now stands.
          executor.compileQuery(node, queryId);
    const result = await executor.executeQuery<Row>(compiled);
    return result.rows;
  };
}

function compileTemplate(db: Kysely<Database>, build: (db: Kysely<Database>, ...values: string[]) => Compilable<unknown> & OperationNodeSource, count: number): Template {
  const marks = Array.from({ length: count }, (_, index) => `\u0000prepared-value-${index}`);
  const query = build(db.withoutPlugins(), ...marks);
  const { sql, parameters } = query.compile();
  const sources = parameters.map((parameter) => (typeof parameter === 'string' ? marks.indexOf(parameter) : -1));
  marks.forEach((_, index) => {
    if (sources.filter((source) => source === index).length !== 1) throw new Error(`a prepared query must bind value ${index} exactly once, as given`);
  });
  return { node: query.toOperationNode() as RootOperationNode, sql, parameters, sources };
}
