import { CompiledQuery, type Compilable, type Kysely } from 'kysely';
import type { Database } from './tables.js';

/** Stands for the value a call binds at its place in a compiled query. */
class PreparedValue {
  constructor(readonly position: number) {}
}

interface Template {
  sql: string;
  parameters: readonly unknown[];
  /** For each parameter, the value it takes from a call, or -1 for a constant of the query. */
  sources: number[];
}

/** Runs a compiled statement's text and values on a pool, outside any transaction: its rows. */
export type DirectRunner = (text: string, values: readonly unknown[]) => Promise<unknown[]>;

/**
 * The databases whose statements outside a transaction may skip Kysely's executor (database.ts
 * registers a PostgreSQL pool's): a keyed read by a caller the instance knows then costs the
 * pool's own query path. Kysely's acquires a connection, runs and releases it through a chain of
 * promises that took about a tenth of the by-id read's JavaScript (bench/README.md). A
 * transaction is another Kysely object, never in here: its statements go through Kysely as
 * before, on its one connection.
 */
const directRunners = new WeakMap<Kysely<Database>, DirectRunner>();

export function runPreparedDirectly(db: Kysely<Database>, runner: DirectRunner): void {
  directRunners.set(db, runner);
}

/**
 * A query whose shape never changes, built and compiled by Kysely once instead of on every call
 * (building and compiling took a tenth of a keyed read's CPU in the profile). `build` receives
 * stand-ins for the values and must pass each through, as it is, exactly once; each call binds
 * the real ones. The text is the same on every call, so PostgreSQL plans it once as a prepared
 * statement (database.ts). `test/db/prepared-query.test.ts` holds the proof.
 */
export function preparedQuery<Row, Values extends unknown[]>(build: (db: Kysely<Database>, ...values: Values) => Compilable<Row>) {
  let template: Template | undefined;
  return async (db: Kysely<Database>, ...values: Values): Promise<Row[]> => {
    template ??= compileTemplate(db, build, values.length);
    const known = template;
    const parameters = known.sources.map((source, index) => (source === -1 ? known.parameters[index] : values[source]));
    const direct = directRunners.get(db);
    if (direct) return direct(known.sql, parameters) as Promise<Row[]>;
    const result = await db.executeQuery<Row>(CompiledQuery.raw(known.sql, parameters));
    return result.rows;
  };
}

function compileTemplate<Values extends unknown[]>(db: Kysely<Database>, build: (db: Kysely<Database>, ...values: Values) => Compilable<unknown>, count: number): Template {
  const marks = Array.from({ length: count }, (_, position) => new PreparedValue(position));
  const { sql, parameters } = build(db, ...(marks as unknown as Values)).compile();
  const sources = parameters.map((parameter) => (parameter instanceof PreparedValue ? parameter.position : -1));
  marks.forEach((mark) => {
    if (sources.filter((source) => source === mark.position).length !== 1) throw new Error(`a prepared query must bind value ${mark.position} exactly once, as given`);
  });
  return { sql, parameters, sources };
}
