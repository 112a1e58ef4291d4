import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { DatabaseHandle } from '../../src/db/database.js';
import { StatementResult } from '../../src/db/statement-result.js';
import { createScratchDatabase, onPostgres, openTestDatabase } from '../helpers/test-app.js';

describe("a prepared statement's row shape, kept between executions", () => {
  it('reads the columns the server describes now, not those it described before under the same name', () => {
    const statement = `test-${randomUUID()}`;
    const text = { format: 'text', tableID: 0, columnID: 0, dataTypeSize: -1, dataTypeModifier: -1 };
    const first = new StatementResult(statement);
    first.addFields([{ ...text, name: 'id', dataTypeID: 25 }, { ...text, name: 'count', dataTypeID: 23 }] as never);
    assert.deepEqual({ ...first.parseRow(['a', '7']) }, { id: 'a', count: 7 });
    const same = new StatementResult(statement);
    same.addFields([{ ...text, name: 'id', dataTypeID: 25 }, { ...text, name: 'count', dataTypeID: 23 }] as never);
    assert.deepEqual({ ...same.parseRow(['b', '8']) }, { id: 'b', count: 8 });
    const changed = new StatementResult(statement);
    changed.addFields([{ ...text, name: 'id', dataTypeID: 25 }, { ...text, name: 'count', dataTypeID: 25 }, { ...text, name: 'open', dataTypeID: 16 }] as never);
    assert.deepEqual({ ...changed.parseRow(['c', '9', 't']) }, { id: 'c', count: '9', open: true });
  });

  describe('on PostgreSQL, where queries with values are prepared statements', { skip: !onPostgres && 'PGlite runs no prepared statements of ours' }, () => {
    let database: DatabaseHandle;
    let drop: () => Promise<void>;
    before(async () => {
      const scratch = await createScratchDatabase();
      drop = scratch.drop;
      database = await openTestDatabase(scratch.url);
    });
    after(async () => {
      await database.close();
      await drop();
    });

    it('parses every execution as the first: amounts as numbers, times as dates, JSON as objects, nulls as null', async () => {
      for (const amount of [5, 900_000_000_000]) {
        const { rows } = await sql<{ amount: number; at: Date; doc: unknown; nothing: null }>`select ${amount}::int8 as amount, now() as at, ${JSON.stringify({ amount })}::jsonb as doc, null::text as nothing`.execute(database.db);
        assert.equal(rows.length, 1);
        assert.equal(rows[0]!.amount, amount);
        assert.ok(rows[0]!.at instanceof Date);
        assert.deepEqual(rows[0]!.doc, { amount });
        assert.equal(rows[0]!.nothing, null);
        assert.deepEqual(Object.keys(rows[0]!), ['amount', 'at', 'doc', 'nothing']);
      }
    });
  });
});
