import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { sql, type Kysely } from 'kysely';
import { buildApp } from '../../src/app.js';
import { openDatabase } from '../../src/db/database.js';
import type { Database } from '../../src/db/tables.js';
import type { JobRunner } from '../../src/jobs/job-runner.js';
import { createScratchDatabase, createUser, loginAdmin, newVariantBody, onPostgres, openTestDatabase, poolMode, testConfig, type Session } from '../helpers/test-app.js';

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
  // A session or client noted as used after a one-statement write (at most once a minute, as the
  // statement's own condition says) is sent on its own, whenever a connection is free: not counted.
  const record = (text: string) => {
    if (!/^update (sessions|api_clients) set last_used_at/.test(text)) sent.push(text);
  };
  before(async () => {
    const scratch = onPostgres ? await createScratchDatabase() : undefined;
    // One connection: every statement, and every prepared plan, is on it.
    const database = scratch
      ? await openDatabase({ databaseUrl: scratch.url, dataDir: 'memory://', poolSize: 1, poolMode, onStatement: record })
      : await openTestDatabase(undefined, undefined, record);
    db = database.db;
    let jobs: JobRunner;
    ({ app, jobs } = await buildApp({ config: testConfig({}, scratch?.url), database, logger: false, tellOperator: () => {} }));
    await app.ready();
    // Background loops would add their own statements.
    await jobs.stop();
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

  it('reserves one line in one statement and commits in two, outside any transaction, the caller checked in them, with their events', async () => {
    const created = await app.inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: newVariantBody(100, 'statements') });
    const variantId = created.json().id as string;
    await checkout(variantId);
    const { reserving, committing } = await checkout(variantId);
    // The caller's check, the hold, then the reservation, its line and its event: one statement, no BEGIN nor COMMIT.
    assert.deepEqual(reserving.map((text) => /set reserved = reserved \+/.test(text) && /insert into reservations/.test(text) && /join "sessions"/.test(text)), [true], reserving.join('\n---\n'));
    // The reservation read without a lock, then closed with its units taken and its events recorded.
    const kinds = committing.map((text) =>
      /"lapsed"/.test(text) && !/for update/.test(text) ? 'read' : /update reservations set status/.test(text) && /update variants set stock = stock -/.test(text) && /join "sessions"/.test(text) ? 'commit' : text,
    );
    assert.deepEqual(kinds, ['read', 'commit'], committing.join('\n---\n'));
    const variant = await db.selectFrom('variants').select(['stock', 'reserved']).where('id', '=', variantId).executeTakeFirstOrThrow();
    assert.deepEqual(variant, { stock: 98, reserved: 0 });
    const types = await db.selectFrom('events').select('type').where('subject_id', '=', variantId).where('type', '=', 'variant.stock_changed').execute();
    assert.equal(types.length, 2, 'a stock event a commit');
  });

  it('plans each of them once per connection (a generic plan), not at every execution', { skip: (!onPostgres && 'needs PostgreSQL') || (poolMode === 'transaction' && 'no prepared statements in transaction mode') }, async () => {
    const created = await app.inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: newVariantBody(100, 'plans') });
    for (let index = 0; index < 12; index++) await checkout(created.json().id);
    const { rows } = await sql<{ statement: string; generic_plans: string; custom_plans: string }>`
      select statement, generic_plans, custom_plans from pg_prepared_statements
      where statement like '%insert into reservations%' or statement like '%update variants set stock = stock -%' or statement like '%"lapsed"%'`.execute(db);
    // The one-statement reservation and commit and the commit's read ran twelve times each.
    const often = rows.filter((row) => Number(row.generic_plans) + Number(row.custom_plans) >= 12);
    assert.equal(often.length, 3, rows.map((row) => row.statement).join('\n---\n'));
    for (const row of often) {
      // PostgreSQL plans a prepared statement afresh five times before it weighs a generic plan.
      assert.ok(Number(row.custom_plans) <= 5 && Number(row.generic_plans) >= 7, `planned ${row.custom_plans} times:\n${row.statement}`);
    }
  });

  it('commits a reservation of one line in one statement with its movement, its events and the reply a transaction gives', async () => {
    const created = await app.inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: newVariantBody(5, 'one-line') });
    const variantId = created.json().id as string;
    await checkout(variantId);
    const reservation = (await app.inject({ method: 'POST', url: '/api/reservations', headers: admin.auth, payload: { lines: [{ variant_id: variantId, quantity: 2 }], reference: 'ORD-9' } })).json();
    sent.length = 0;
    const committed = await app.inject({ method: 'POST', url: `/api/reservations/${reservation.id}/commit`, headers: admin.auth });
    assert.equal(committed.statusCode, 200, committed.body);
    assert.ok(!sent.some((text) => /^begin$/i.test(text.trim())), `no transaction:\n${sent.join('\n---\n')}`);
    assert.deepEqual(committed.json(), { ...reservation, status: 'committed', updated_at: committed.json().updated_at });
    assert.ok(committed.json().updated_at > reservation.updated_at);
    const variant = await db.selectFrom('variants').select(['stock', 'reserved']).where('id', '=', variantId).executeTakeFirstOrThrow();
    assert.deepEqual(variant, { stock: 2, reserved: 0 });
    const movement = await db.selectFrom('stock_movements').selectAll().where('variant_id', '=', variantId).orderBy('created_at', 'desc').executeTakeFirstOrThrow();
    assert.deepEqual([movement.delta, movement.stock_after, movement.reason, movement.reference, movement.actor_id], [-2, 2, 'reservation committed', 'ORD-9', admin.id]);
    const events = await db.selectFrom('events').selectAll().where('request_id', '=', String(committed.headers['x-request-id'])).execute();
    const byType = Object.fromEntries(events.map((event) => [event.type, event]));
    assert.deepEqual(Object.keys(byType).sort(), ['reservation.committed', 'variant.stock_changed']);
    assert.deepEqual(byType['reservation.committed']!.data, { before: { status: 'active' }, after: { status: 'committed' }, lines: [{ variant_id: variantId, quantity: 2 }], reference: 'ORD-9' });
    assert.equal(byType['reservation.committed']!.subject_id, reservation.id);
    const atDefault = (await db.selectFrom('locations').select('id').where('is_default', '=', true).executeTakeFirstOrThrow()).id;
    assert.deepEqual(byType['variant.stock_changed']!.data, { before: { stock: 4, reserved: 2 }, after: { stock: 2, reserved: 0 }, delta: -2, stock_after: 2, location_id: atDefault, reason: 'reservation committed', reference: 'ORD-9' });
    for (const event of events) assert.deepEqual([event.actor_id, event.actor_type], [admin.id, 'user']);
    const again = await app.inject({ method: 'POST', url: `/api/reservations/${reservation.id}/commit`, headers: admin.auth });
    assert.deepEqual([again.statusCode, again.json()], [200, committed.json()], 'a repeat answers it unchanged, through the transaction');
    assert.equal((await app.inject({ method: 'POST', url: `/api/reservations/${reservation.id}/release`, headers: admin.auth })).statusCode, 409);
    assert.equal((await db.selectFrom('variants').select('stock').where('id', '=', variantId).executeTakeFirstOrThrow()).stock, 2, 'nothing taken twice');
  });

  it('answers a one-line reservation the one statement could not write as the transaction does: 409 short, 404 unknown, nothing held', async () => {
    const created = await app.inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: newVariantBody(1, 'one-line-refused') });
    const variantId = created.json().id as string;
    await checkout(variantId);
    sent.length = 0;
    const short = await app.inject({ method: 'POST', url: '/api/reservations', headers: admin.auth, payload: { lines: [{ variant_id: variantId.toUpperCase(), quantity: 2 }] } });
    assert.equal(short.statusCode, 409, short.body);
    assert.equal(short.json().code, 'insufficient_stock');
    assert.deepEqual(short.json().errors.map((error: { path: string }) => error.path), ['/lines/0']);
    assert.ok(/insert into reservations/.test(sent[0] ?? '') && !/^begin$/i.test(sent[0] ?? ''), 'the one statement was tried first');
    const unknown = await app.inject({ method: 'POST', url: '/api/reservations', headers: admin.auth, payload: { lines: [{ variant_id: randomUUID(), quantity: 1 }] } });
    assert.equal(unknown.statusCode, 404, unknown.body);
    assert.deepEqual(unknown.json().errors.map((error: { path: string }) => error.path), ['/lines/0/variant_id']);
    const variant = await db.selectFrom('variants').select(['stock', 'reserved']).where('id', '=', variantId).executeTakeFirstOrThrow();
    assert.deepEqual(variant, { stock: 0, reserved: 0 });
    const lines = await db.selectFrom('reservation_lines').select('reservation_id').where('variant_id', '=', variantId).execute();
    assert.equal(lines.length, 1, "only the first checkout's line");
  });

  it('writes nothing for a caller the database no longer lets in, though it wrote in one statement a moment before: 401', async () => {
    const manager = await createUser(app, { role: 'manager', admin });
    const created = await app.inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: newVariantBody(10, 'unnotified') });
    const variantId = created.json().id as string;
    const reserve = () => app.inject({ method: 'POST', url: '/api/reservations', headers: manager.auth, payload: { lines: [{ variant_id: variantId, quantity: 1 }] } });
    const open = (await reserve()).json();
    sent.length = 0;
    assert.equal((await reserve()).statusCode, 201, 'one statement');
    assert.ok(!sent.some((text) => /^begin$/i.test(text.trim())), sent.join('\n---\n'));
    // The session ends behind the service's back, as another instance would end it.
    await sql`update sessions set ended_at = now() where user_id = ${manager.id}`.execute(db);
    sent.length = 0;
    const refused = await reserve();
    assert.equal(refused.statusCode, 401, refused.body);
    assert.ok(/insert into reservations/.test(sent[0] ?? '') && /set reserved = reserved \+/.test(sent[0] ?? ''), 'the one statement was tried first');
    const commit = await app.inject({ method: 'POST', url: `/api/reservations/${open.id}/commit`, headers: manager.auth });
    assert.equal(commit.statusCode, 401, commit.body);
    const read = await app.inject({ method: 'GET', url: `/api/reservations/${open.id}`, headers: manager.auth });
    assert.equal(read.statusCode, 401, read.body);
    const made = await db.selectFrom('reservations').select(['id', 'status']).where('created_by', '=', manager.id).orderBy('created_at').execute();
    assert.deepEqual(made.map((row) => row.status), ['active', 'active'], 'the two made before the end, still open; nothing made or committed after it');
    const variant = await db.selectFrom('variants').select(['stock', 'reserved']).where('id', '=', variantId).executeTakeFirstOrThrow();
    assert.deepEqual(variant, { stock: 10, reserved: 2 });
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

  it('reads a variant with the same statements whether it is stocked at ten locations, some inactive, or at one (API.md section 21: the sums are kept)', async () => {
    const post = async (url: string, payload: object) => {
      const created = await app.inject({ method: 'POST', url, headers: admin.auth, payload });
      assert.equal(created.statusCode, 201, created.body);
      return created.json().id as string;
    };
    const atOne = await post('/api/variants', newVariantBody(7, 'one-location'));
    const atTen = await post('/api/variants', newVariantBody(1, 'ten-locations'));
    for (let index = 0; index < 9; index++) {
      const location = await post('/api/locations', { code: `ten-${randomUUID().slice(0, 8)}`, name: 'Store', status: index % 3 === 0 ? 'inactive' : 'active' });
      const stocked = await app.inject({ method: 'PUT', url: `/api/variants/${atTen}/stock`, headers: admin.auth, payload: { stock: 2, location_id: location, reason: 'count' } });
      assert.equal(stocked.statusCode, 200, stocked.body);
    }
    const read = async (id: string) => {
      sent.length = 0;
      const shown = await app.inject({ method: 'GET', url: `/api/variants/${id}`, headers: admin.auth });
      assert.equal(shown.statusCode, 200, shown.body);
      return { body: shown.json(), statements: sent.splice(0) };
    };
    const one = await read(atOne);
    const ten = await read(atTen);
    assert.deepEqual([ten.body.stock, ten.body.reserved, ten.body.available], [19, 0, 13], 'three inactive locations hold 6 units, counted in stock only');
    assert.deepEqual(ten.statements, one.statements, 'the same statements, none reading the levels');
    assert.ok(!ten.statements.some((text) => /stock_levels/.test(text)));
  });
});
