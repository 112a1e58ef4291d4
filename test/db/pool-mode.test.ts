import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { buildApp } from '../../src/app.js';
import { openDatabase, type PoolMode } from '../../src/db/database.js';
import { createScratchDatabase, createUser, loginAdmin, newVariantBody, onPostgres, poolMode, testConfig } from '../helpers/test-app.js';

const SOURCE = path.join(import.meta.dirname, '../../src');
const sourceFiles = (directory: string): string[] =>
  readdirSync(directory, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(path.join(directory, entry.name)) : entry.name.endsWith('.ts') ? [path.join(directory, entry.name)] : [],
  );

/**
 * API.md section 17: with DATABASE_POOL_MODE=transaction nothing is kept on a server connection
 * between transactions, so a pooler in transaction mode (PgBouncer) can hand any of them to any
 * transaction: no named prepared statement, no LISTEN, no session-level advisory lock, no SET
 * outside a transaction.
 */
describe('a connection carries no state between transactions', () => {
  it('in the source: no LISTEN (in any case), no SET outside SET LOCAL, no session-level advisory lock, no private field of pg', () => {
    for (const file of sourceFiles(SOURCE)) {
      const text = readFileSync(file, 'utf8');
      for (const banned of [/LISTEN/, /[`'"]\s*listen\s/i, /[`'"]\s*set\s+(session\s+)?[a-z_.]+\s*(=|to)\s/i, /connection\.stream/, /pg_advisory_lock\(/, /pg_try_advisory_lock\(/, /pg_notify/]) {
        assert.ok(!banned.test(text) || file.includes(`${path.sep}migrations${path.sep}`), `${path.relative(SOURCE, file)} has ${banned}`);
      }
    }
  });

  /**
   * One app over one connection (pool size 1) makes the requests of every kind of statement (reads
   * beside the caller, pages, writes in transactions, the flash sale's one statement), then asks
   * that connection what it holds. Directly on PostgreSQL the connection is the app's own; through
   * a pooler every server connection must hold nothing, so any it lands on answers the same.
   */
  const afterRequests = async (mode: PoolMode) => {
    const scratch = await createScratchDatabase();
    const sent: string[] = [];
    const database = await openDatabase({ databaseUrl: scratch.url, dataDir: 'memory://', poolSize: 1, poolMode: mode, onStatement: (text) => sent.push(text) });
    const { app, jobs } = await buildApp({ config: testConfig({ DATABASE_POOL_MODE: mode }, scratch.url), database, logger: false, tellOperator: () => {} });
    try {
      await app.ready();
      await jobs.stop();
      const admin = await loginAdmin(app);
      const manager = await createUser(app, { role: 'manager', admin });
      const variant = (await app.inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: newVariantBody(10, 'pooled') })).json();
      for (let round = 0; round < 3; round++) {
        assert.equal((await app.inject({ method: 'GET', url: `/api/variants/${variant.id}`, headers: manager.auth })).statusCode, 200);
        assert.equal((await app.inject({ method: 'GET', url: '/api/variants?limit=5', headers: manager.auth })).statusCode, 200);
        const reserved = await app.inject({ method: 'POST', url: '/api/reservations', headers: manager.auth, payload: { lines: [{ variant_id: variant.id, quantity: 1 }] } });
        assert.equal(reserved.statusCode, 201, reserved.body);
        assert.equal((await app.inject({ method: 'POST', url: `/api/reservations/${reserved.json().id}/commit`, headers: manager.auth })).statusCode, 200);
        const balance = await app.inject({ method: 'PUT', url: `/api/users/${manager.id}/balance`, headers: admin.auth, payload: { delta: 1, reason: `round ${round}` } });
        assert.equal(balance.statusCode, 200, balance.body);
      }
      const { rows } = await sql<{ prepared: number; listening: number; timeout: string }>`
        select (select count(*)::int from pg_prepared_statements) as prepared,
               (select count(*)::int from pg_listening_channels()) as listening,
               current_setting('statement_timeout') as timeout`.execute(database.db);
      return { ...rows[0]!, sent };
    } finally {
      await app.close();
      await scratch.drop();
    }
  };

  it('in transaction mode: no named statement, no LISTEN, no SET, no session-level lock', { skip: !onPostgres && 'needs PostgreSQL' }, async () => {
    const { prepared, listening, sent } = await afterRequests('transaction');
    assert.equal(prepared, 0, 'no named prepared statement on the connection');
    assert.equal(listening, 0, 'no LISTEN');
    const stateful = sent.filter((text) => /^\s*(listen|set |reset |prepare |select pg_advisory_lock|select pg_try_advisory_lock)/i.test(text));
    assert.deepEqual(stateful, []);
  });

  it('in session mode (directly on PostgreSQL), the same requests leave named statements, which the test above would see', { skip: (!onPostgres && 'needs PostgreSQL') || (poolMode === 'transaction' && 'DATABASE_URL names a pooler in transaction mode') }, async () => {
    const { prepared, listening, timeout } = await afterRequests('session');
    assert.ok(prepared > 0, 'named statements, planned once per connection');
    assert.equal(listening, 0, 'no LISTEN in either mode');
    assert.equal(timeout, '5s', 'DATABASE_STATEMENT_TIMEOUT sent at start');
  });
});
