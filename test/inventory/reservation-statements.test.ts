import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { sql, type Kysely } from 'kysely';
import { buildApp } from '../../src/app.js';
import { openDatabase } from '../../src/db/database.js';
import type { Database } from '../../src/db/tables.js';
import { createScratchDatabase, loginAdmin, newVariantBody, onPostgres, openTestDatabase, testConfig, type Session } from '../helpers/test-app.js';

/**
 * What a flash sale's checkout costs the database (bench/README.md): the statements a reservation
 * and its commit send, and, on PostgreSQL, that each is planned once per connection.
 */
describe("a checkout's statements", () => {
  const sent: string[] = [];
  let app: FastifyInstance;
  let db: Kysely<Database>;
  let admin: Session;
  let close: () => Promise<void>;
  before(async () => {
    const scratch = onPostgres ? await createScratchDatabase() : undefined;
    // One connection: every statement, and every prepared plan, is on it.
    const database = scratch
      ? await openDatabase({ databaseUrl: scratch.url, dataDir: 'memory://', poolSize: 1, onStatement: (text) => sent.push(text) })
      : await openTestDatabase(undefined, undefined, (text) => sent.push(text));
    db = database.db;
    app = await buildApp({ config: testConfig({}, scratch?.url), database, logger: false, tellOperator: () => {} });
    await app.ready();
    // Background loops would add their own statements.
    await app.jobs.stop();
    admin = await loginAdmin(app);
    close = async () => {
      await app.close();
      await scratch?.drop();
    };
  });
  after(() => close());

  const checkout = async (variantId: string) => {
    sent.length = 0;
    const reserved = await app.inject({ method: 'POST', url: '/api/reservations', headers: admin.auth, payload: { lines: [{ variant_id: variantId, quantity: 1 }] } });
    assert.equal(reserved.statusCode, 201, reserved.body);
    const reserving = sent.splice(0);
    const committed = await app.inject({ method: 'POST', url: `/api/reservations/${reserved.json().id}/commit`, headers: admin.auth });
    assert.equal(committed.statusCode, 200, committed.body);
    return { reserving, committing: sent.splice(0) };
  };
  const withoutTransactionControl = (texts: string[]) => texts.filter((text) => !/^(begin|commit)$/i.test(text.trim()));

  it('reserves one line in one statement and commits in two, for a caller the instance knows, with their events', async () => {
    const created = await app.inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: newVariantBody(100, 'statements') });
    const variantId = created.json().id as string;
    await checkout(variantId);
    const { reserving, committing } = await checkout(variantId);
    // The reservation, its lines, its event (after the variants' check) and the hold.
    assert.deepEqual(withoutTransactionControl(reserving).map((text) => /insert into reservations/.test(text) && /set reserved = reserved \+/.test(text)), [true], reserving.join('\n---\n'));
    // The reservation read and locked, then the units taken with the reservation closed and the events recorded.
    assert.deepEqual(withoutTransactionControl(committing).map((text) => /for update/.test(text) || /update reservations set status/.test(text)), [true, true], committing.join('\n---\n'));
    const variant = await db.selectFrom('variants').select(['stock', 'reserved']).where('id', '=', variantId).executeTakeFirstOrThrow();
    assert.deepEqual(variant, { stock: 98, reserved: 0 });
    const types = await db.selectFrom('events').select('type').where('subject_id', '=', variantId).where('type', '=', 'variant.stock_changed').execute();
    assert.equal(types.length, 2, 'a stock event a commit');
  });

  it('plans each of them once per connection (a generic plan), not at every execution', { skip: !onPostgres && 'needs PostgreSQL' }, async () => {
    const created = await app.inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: newVariantBody(100, 'plans') });
    for (let index = 0; index < 12; index++) await checkout(created.json().id);
    const { rows } = await sql<{ statement: string; generic_plans: string; custom_plans: string }>`
      select statement, generic_plans, custom_plans from pg_prepared_statements
      where statement like '%insert into reservations%' or statement like '%update variants set stock = stock -%' or statement like '%"lapsed"%'`.execute(db);
    assert.equal(rows.length, 3, rows.map((row) => row.statement).join('\n---\n'));
    for (const row of rows) {
      // PostgreSQL plans a prepared statement afresh five times before it weighs a generic plan.
      assert.ok(Number(row.custom_plans) <= 5 && Number(row.generic_plans) >= 7, `planned ${row.custom_plans} times:\n${row.statement}`);
    }
  });

  it('refuses a sold-out variant before writing anything', async () => {
    const created = await app.inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: newVariantBody(1, 'sold-out') });
    const variantId = created.json().id as string;
    await checkout(variantId);
    sent.length = 0;
    const refused = await app.inject({ method: 'POST', url: '/api/reservations', headers: admin.auth, payload: { lines: [{ variant_id: variantId, quantity: 1 }, { variant_id: randomUUID(), quantity: 1 }] } });
    assert.equal(refused.statusCode, 404, 'a line naming no variant is the 404, before the short one');
    assert.ok(!sent.some((text) => /set "reserved" = reserved \+/.test(text)), 'no hold of its own tried');
    const lines = await db.selectFrom('reservation_lines').select('reservation_id').where('variant_id', '=', variantId).execute();
    assert.equal(lines.length, 1, "only the first checkout's line");
  });
});
