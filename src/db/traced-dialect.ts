import type { DatabaseConnection, Dialect, Driver, Kysely, QueryResult, TransactionSettings, CompiledQuery } from 'kysely';
import { inStatementSpan } from '../tracing.js';

/**
 * A dialect whose every statement is a span (API.md section 15): PostgreSQL and the embedded
 * database alike, named by its first keyword, with the statement's text (never its values).
 * Only under a parent (a request's, a job run's: API.md section 17): a statement outside any
 * (a pool's own) is not recorded, and one of a background run counts as the run's work when it
 * changes a row. Used only when tracing is on; off, the dialect is not wrapped at all.
 */
export class TracedDialect implements Dialect {
  constructor(private readonly inner: Dialect) {}

  createAdapter() {
    return this.inner.createAdapter();
  }

  createDriver(): Driver {
    return new TracedDriver(this.inner.createDriver());
  }

  createIntrospector(db: Kysely<any>) {
    return this.inner.createIntrospector(db);
  }

  createQueryCompiler() {
    return this.inner.createQueryCompiler();
  }
}

class TracedConnection implements DatabaseConnection {
  constructor(readonly inner: DatabaseConnection) {}

  executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    const operation = /^\s*(\w+)/.exec(compiledQuery.sql)?.[1]?.toUpperCase() ?? 'SQL';
    return inStatementSpan(
      operation,
      { attributes: { 'db.system.name': 'postgresql', 'db.operation.name': operation, 'db.query.text': compiledQuery.sql } },
      () => this.inner.executeQuery<R>(compiledQuery),
      (result) => (result.numAffectedRows ?? 0n) > 0n,
    );
  }

  streamQuery<R>(compiledQuery: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(compiledQuery, chunkSize);
  }
}

const innerOf = (connection: DatabaseConnection) => (connection instanceof TracedConnection ? connection.inner : connection);

class TracedDriver implements Driver {
  constructor(private readonly inner: Driver) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new TracedConnection(await this.inner.acquireConnection());
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction(innerOf(connection), settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction(innerOf(connection));
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(innerOf(connection));
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(innerOf(connection));
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}
