import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/database.js';
import { migrateToLatest, runMigrations } from '../../src/db/migrate.js';
import { createScratchDatabase, onPostgres, poolMode } from '../helpers/test-app.js';

/** Every migration file of src/db/migrations, in order: each must be registered and applied. */
const EVERY_MIGRATION = readdirSync(path.join(import.meta.dirname, '../../src/db/migrations'))
  .filter((file) => file.endsWith('.ts'))
  .map((file) => file.replace(/\.ts$/, ''))
  .sort();

const tableNames = async (db: Awaited<ReturnType<typeof openDatabase>>['db']) =>
  (
    await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = 'public' order by 1`.execute(db)
  ).rows.map((row) => row.name);

describe('migrations', () => {
  it('run twice in a row: the second run changes nothing', async () => {
    const scratch = onPostgres ? await createScratchDatabase() : undefined;
    const database = await openDatabase({ databaseUrl: scratch?.url, dataDir: 'memory://', poolMode });
    try {
      await migrateToLatest(database.db);
      const before = await tableNames(database.db);
      await migrateToLatest(database.db);
      assert.deepEqual(await tableNames(database.db), before);
      assert.ok(before.includes('users') && before.includes('variants') && before.includes('balance_ledger'));
      const applied = await sql<{ name: string }>`select name from kysely_migration`.execute(database.db);
      assert.deepEqual(applied.rows.map((row) => row.name), EVERY_MIGRATION);
    } finally {
      await database.close();
      await scratch?.drop();
    }
  });

  it("leave nothing of a run whose migration throws after some of its work: neither that work nor an earlier migration's", async () => {
    const scratch = onPostgres ? await createScratchDatabase() : undefined;
    const database = await openDatabase({ databaseUrl: scratch?.url, dataDir: 'memory://', poolMode });
    try {
      const failing = {
        'a-first': { up: async (db: typeof database.db) => void (await sql`create table first_made (id integer)`.execute(db)) },
        'b-throws': {
          up: async (db: typeof database.db) => {
            await sql`create table half_made (id integer)`.execute(db);
            throw new Error('the migration code failed after its DDL');
          },
        },
      };
      await assert.rejects(runMigrations(database.db, failing), /b-throws failed: the migration code failed after its DDL/);
      const tables = await tableNames(database.db);
      assert.ok(!tables.includes('half_made') && !tables.includes('first_made'), `nothing kept: ${tables.join(', ')}`);
      assert.equal((await sql<{ count: number }>`select count(*)::integer as count from kysely_migration`.execute(database.db)).rows[0]?.count, 0);
      await runMigrations(database.db, { 'a-first': failing['a-first'] });
      assert.ok((await tableNames(database.db)).includes('first_made'), 'the run goes through once the migration is fixed');
    } finally {
      await database.close();
      await scratch?.drop();
    }
  });

  it('keep PGlite data under DATA_DIR across a restart', { skip: onPostgres && 'PGlite only' }, async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'pglite-'));
    try {
      const first = await openDatabase({ dataDir });
      await migrateToLatest(first.db);
      await sql`insert into variants (id, product_id, sku, name, price) values (gen_random_uuid(), 'p', 'KEEP-ME', 'Kept', 1)`.execute(first.db);
      await first.close();
      const second = await openDatabase({ dataDir });
      await migrateToLatest(second.db);
      const rows = await sql<{ sku: string }>`select sku from variants`.execute(second.db);
      assert.deepEqual(rows.rows.map((row) => row.sku), ['KEEP-ME']);
      await second.close();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('run once when two instances start at once on one PostgreSQL database', { skip: !onPostgres && 'needs PostgreSQL' }, async () => {
    const scratch = await createScratchDatabase();
    const instances = await Promise.all(Array.from({ length: 4 }, () => openDatabase({ databaseUrl: scratch.url, dataDir: 'memory://', poolMode })));
    try {
      await Promise.all(instances.map((instance) => migrateToLatest(instance.db)));
      const applied = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(instances[0]!.db);
      assert.deepEqual(applied.rows.map((row) => row.name), EVERY_MIGRATION);
    } finally {
      await Promise.all(instances.map((instance) => instance.close()));
      await scratch.drop();
    }
  });
});
