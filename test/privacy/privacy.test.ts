import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql, type Kysely } from 'kysely';
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../src/db/tables.js';
import { eventually } from '../helpers/eventually.js';
import { createUser, login, newVariantBody, problemOf, useAppWithAdmin, type Session } from '../helpers/test-app.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { enrolTotp } from '../mfa/mfa-helpers.js';

const WEBHOOK_ENVIRONMENT = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' };

/**
 * Every place the person could still be named: each text, varchar, jsonb, array and inet column
 * of every table, searched for each value. Returns "table.column: value" for each hit.
 */
async function findAnywhere(db: Kysely<Database>, values: string[]): Promise<string[]> {
  const columns = await sql<{ table_name: string; column_name: string }>`
    select table_name, column_name from information_schema.columns
    where table_schema = current_schema() and data_type in ('text', 'character varying', 'jsonb', 'ARRAY', 'inet', 'USER-DEFINED')
    order by table_name, column_name`.execute(db);
  const hits: string[] = [];
  for (const { table_name: table, column_name: column } of columns.rows) {
    for (const value of values) {
      const found = await sql<{ count: string }>`select count(*) as count from ${sql.table(table)} where ${sql.ref(column)}::text ilike ${`%${value}%`}`.execute(db);
      if (Number(found.rows[0]!.count) > 0) hits.push(`${table}.${column}: ${value}`);
    }
  }
  return hits;
}

const eventsOf = (db: Kysely<Database>, subjectId: string, type: string) =>
  db.selectFrom('events').selectAll().where('subject_id', '=', subjectId).where('type', '=', type).execute();

/** API.md section 13: data exports, self-deletion, erasure. */
describe('privacy requests', () => {
  const fixture = useAppWithAdmin({ environment: WEBHOOK_ENVIRONMENT });
  const receiver = new WebhookReceiver();
  let receiverUrl: string;
  before(async () => {
    receiverUrl = await receiver.start();
  });
  after(() => receiver.stop());

  const exportOf = (app: FastifyInstance, url: string, session: Session) => app.inject({ method: 'GET', url, headers: session.auth });

  it('exports the caller its own data as one attachment, ended sessions and events included, and records it', async () => {
    const { app, db, admin } = fixture;
    const user = await createUser(app, { role: 'manager', admin, name: 'Export Person' });
    const second = await login(app, user.email, user.password);
    assert.equal((await app.inject({ method: 'POST', url: '/api/auth/logout', headers: second.auth, payload: { refresh_token: second.refreshToken } })).statusCode, 204);
    await app.inject({ method: 'PUT', url: `/api/users/${user.id}/balance`, headers: admin.auth, payload: { delta: 250, reason: 'welcome credit' } });
    const variant = (await app.inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: newVariantBody(5) })).json();
    const reservation = (await app.inject({ method: 'POST', url: '/api/reservations', headers: user.auth, payload: { lines: [{ variant_id: variant.id, quantity: 2 }] } })).json();

    const reply = await exportOf(app, '/api/users/profile/export', user);
    assert.equal(reply.statusCode, 200, reply.body);
    assert.equal(reply.headers['content-disposition'], `attachment; filename="user-${user.id}.json"`);
    assert.equal(reply.headers['cache-control'], 'no-store');
    assert.match(String(reply.headers['content-type']), /^application\/json/);
    const document = reply.json();
    assert.deepEqual(Object.keys(document), ['exported_at', 'user', 'sessions', 'mfa_factors', 'ledger', 'reservations', 'events']);
    assert.equal(document.user.email, user.email);
    assert.equal(document.sessions.length, 2, 'the open session and the ended one');
    const ended = document.sessions.find((session: { ended_at: string | null }) => session.ended_at !== null);
    assert.ok(ended, 'ended sessions are exported');
    assert.ok('ip' in ended && 'user_agent' in ended);
    assert.deepEqual(document.mfa_factors, []);
    assert.deepEqual(document.ledger.map((entry: { delta: number }) => entry.delta), [250]);
    assert.deepEqual(document.reservations.map((item: { id: string }) => item.id), [reservation.id]);
    const types = document.events.map((event: { type: string }) => event.type);
    assert.ok(types.includes('user.registered') && types.includes('user.balance_changed'), 'events about the user');
    assert.ok(types.includes('reservation.created'), 'events the user made about other subjects');
    const recorded = await eventsOf(db, user.id, 'user.data_exported');
    assert.equal(recorded.length, 1);
    assert.equal(recorded[0]!.actor_id, user.id);
  });

  it('exports any user, deleted ones too, to an admin only (404 for an id that never was a user)', async () => {
    const { app, db, admin } = fixture;
    const user = await createUser(app);
    assert.equal((await exportOf(app, `/api/users/${admin.id}/export`, user)).statusCode, 403);
    assert.equal((await app.inject({ method: 'DELETE', url: `/api/users/${user.id}`, headers: admin.auth })).statusCode, 204);
    const reply = await exportOf(app, `/api/users/${user.id}/export`, admin);
    assert.equal(reply.statusCode, 200);
    assert.equal(reply.json().user.id, user.id);
    const recorded = await eventsOf(db, user.id, 'user.data_exported');
    assert.equal(recorded[0]!.actor_id, admin.id);
    assert.equal(problemOf(await exportOf(app, `/api/users/${randomUUID()}/export`, admin)).code, 'not_found');
  });

  it('lets a user delete their own account with the password; the last active admin cannot', async () => {
    const { app, db, admin } = fixture;
    const user = await createUser(app);
    const refused = await app.inject({ method: 'DELETE', url: '/api/users/profile', headers: user.auth, payload: { password: 'not-the-password' } });
    assert.equal(refused.statusCode, 403);
    assert.equal(problemOf(refused).code, 'wrong_password');
    assert.equal(problemOf(await app.inject({ method: 'DELETE', url: '/api/users/profile', headers: user.auth, payload: {} })).code, 'validation_failed');
    const deleted = await app.inject({ method: 'DELETE', url: '/api/users/profile', headers: user.auth, payload: { password: user.password } });
    assert.equal(deleted.statusCode, 204);
    assert.equal((await app.inject({ method: 'GET', url: '/api/users/profile', headers: user.auth })).statusCode, 401, 'its sessions ended');
    const row = await db.selectFrom('users').selectAll().where('id', '=', user.id).executeTakeFirstOrThrow();
    assert.ok(row.deleted_at);
    const [event] = await eventsOf(db, user.id, 'user.deleted');
    assert.equal(event!.actor_id, user.id);
    const lastAdmin = await app.inject({ method: 'DELETE', url: '/api/users/profile', headers: admin.auth, payload: { password: admin.password } });
    assert.equal(lastAdmin.statusCode, 409);
    assert.equal(problemOf(lastAdmin).code, 'last_admin');
    const other = await createUser(app);
    const stale = await app.inject({ method: 'DELETE', url: '/api/users/profile', headers: { ...other.auth, 'if-match': '"99"' }, payload: { password: other.password } });
    assert.equal(problemOf(stale).code, 'precondition_failed', 'If-Match is honoured');
    const allow = await app.inject({ method: 'POST', url: '/api/users/profile', headers: admin.auth });
    assert.equal(allow.statusCode, 405);
    assert.ok(String(allow.headers.allow).split(', ').includes('DELETE'));
  });

  it('erases a person everywhere in one request: no email, name, phone, address or user agent is left in any table; ledger and reservations stay', async () => {
    const { app, db, admin } = fixture;
    const tag = randomUUID().slice(0, 8);
    const person = { email: `erase-${tag}@example.com`, newEmail: `erase-new-${tag}@example.com`, name: `Zelda Erasable ${tag}`, phone: `+1555${tag.replace(/\D/g, '7').slice(0, 7)}` };
    const ip = '203.0.113.77';
    const userAgent = `PrivacyProbe/${tag}`;
    const manager = await createUser(app, { role: 'manager', admin, email: person.email, name: person.name });
    const webhook = (await app.inject({ method: 'POST', url: '/api/webhooks', headers: admin.auth, payload: { url: receiverUrl, events: ['user.updated'] } })).json();
    receiver.answer = () => 500;

    const session = (await app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: ip, headers: { 'user-agent': userAgent }, payload: { email: person.email, password: manager.password } })).json();
    const auth = { authorization: `Bearer ${session.access_token}` };
    const changed = await app.inject({ method: 'PATCH', url: '/api/users/profile', headers: auth, payload: { phone: person.phone, email: person.newEmail, current_password: manager.password } });
    assert.equal(changed.statusCode, 200, changed.body);
    await enrolTotp(app, { ...manager, auth }, `Phone of ${person.name}`);
    await app.inject({ method: 'POST', url: '/api/auth/password-reset', payload: { email: person.newEmail } });
    await app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: person.newEmail, password: 'wrong-password-1' } });
    // With an Idempotency-Key, the reply (the user, with email, name and phone) is stored for replay: it goes too.
    await app.inject({ method: 'PUT', url: `/api/users/${manager.id}/balance`, headers: { ...admin.auth, 'idempotency-key': `erase-${tag}` }, payload: { delta: 900, reason: 'goodwill' } });
    const variant = (await app.inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: newVariantBody(5) })).json();
    const reservation = (await app.inject({ method: 'POST', url: '/api/reservations', headers: auth, payload: { lines: [{ variant_id: variant.id, quantity: 3 }] } })).json();
    const values = [person.email, person.newEmail, person.name, person.phone, ip, userAgent];
    assert.deepEqual((await findAnywhere(db, values)).length > 5, true, 'the person is in the database before');
    const [updated] = await eventsOf(db, manager.id, 'user.updated');
    const pending = await eventually(
      () => db.selectFrom('webhook_deliveries').selectAll().where('event_id', '=', updated!.id).where('last_status_code', '=', 500).executeTakeFirst(),
      'a first delivery of user.updated, refused by the receiver',
    );

    const erased = await app.inject({ method: 'POST', url: `/api/users/${manager.id}/erase`, headers: admin.auth, payload: { reason: 'Erasure request, ticket 4711' } });
    assert.equal(erased.statusCode, 204, erased.body);

    assert.deepEqual(await findAnywhere(db, values), [], 'nothing names the person any more');
    const row = await db.selectFrom('users').selectAll().where('id', '=', manager.id).executeTakeFirstOrThrow();
    assert.equal(row.email, `erased-${manager.id}@erased.invalid`);
    assert.equal(row.name, 'Erased user');
    assert.equal(row.phone, null);
    assert.ok(row.deleted_at && row.erased_at);
    assert.equal(row.balance, 900);
    const ledger = await sql<{ total: string }>`select sum(delta) as total from balance_ledger where user_id = ${manager.id}`.execute(db);
    assert.equal(Number(ledger.rows[0]!.total), 900, 'the ledger stays');
    const kept = await app.inject({ method: 'GET', url: `/api/reservations/${reservation.id}`, headers: admin.auth });
    assert.deepEqual(kept.json().lines, reservation.lines, 'reservations stay');
    assert.deepEqual(reservation.lines.map(({ variant_id, quantity }: { variant_id: string; quantity: number }) => ({ variant_id, quantity })), [{ variant_id: variant.id, quantity: 3 }]);
    for (const table of ['sessions', 'mfa_factors', 'mfa_recovery_codes', 'one_time_tokens'] as const) {
      assert.equal((await db.selectFrom(table).select('id').where('user_id', '=', manager.id).execute()).length, 0, `no ${table}`);
    }
    const [scrubbed] = await eventsOf(db, manager.id, 'user.updated');
    assert.deepEqual(scrubbed!.data, { before: { email: '[erased]', phone: null }, after: { email: '[erased]', phone: '[erased]' } }, 'values erased, a null kept, keys kept');
    const [deletion] = await eventsOf(db, manager.id, 'user.deleted');
    assert.equal((deletion!.data as { before: { name: string } }).before.name, '[erased]');
    const [record] = await eventsOf(db, manager.id, 'user.erased');
    assert.deepEqual(record!.data, { reason: 'Erasure request, ticket 4711' });
    assert.equal(record!.actor_id, admin.id);

    receiver.answer = () => 204;
    const attemptsOf = () => receiver.received.filter((item) => item.headers['webhook-id'] === updated!.id);
    const attemptsBefore = attemptsOf().length;
    assert.ok(attemptsBefore > 0 && attemptsOf().every((item) => item.body.includes(person.newEmail)), 'sent before the erasure: the address');
    const retried = await app.inject({ method: 'POST', url: `/api/webhooks/${webhook.id}/deliveries/${pending.id}/retry`, headers: admin.auth });
    assert.equal(retried.statusCode, 202, retried.body);
    const delivered = await eventually(() => attemptsOf()[attemptsBefore], 'the retried delivery');
    assert.ok(delivered.body.includes('[erased]') && !delivered.body.includes(person.newEmail), 'the delivery not yet sent sends the scrubbed body');

    const again = await app.inject({ method: 'POST', url: `/api/users/${manager.id}/erase`, headers: admin.auth, payload: { reason: 'twice' } });
    assert.equal(again.statusCode, 204);
    assert.equal((await eventsOf(db, manager.id, 'user.erased')).length, 1, 'a second erasure changes nothing');
    const exported = (await exportOf(app, `/api/users/${manager.id}/export`, admin)).json();
    assert.equal(exported.user.name, 'Erased user', 'an erased user exports what remains');
    assert.deepEqual(exported.sessions, []);
  });

  it("keeps the mail of whoever holds the erased person's old address now", async () => {
    const { app, db, admin } = fixture;
    const first = await createUser(app);
    assert.equal((await app.inject({ method: 'DELETE', url: `/api/users/${first.id}`, headers: admin.auth })).statusCode, 204);
    const second = await createUser(app, { email: first.email });
    const mailsOf = () => db.selectFrom('email_outbox').select('id').where(sql<string>`lower(to_address)`, '=', first.email.toLowerCase()).execute();
    const before = await mailsOf();
    assert.ok(before.length >= 2, 'each account was sent its verification link');
    assert.equal((await app.inject({ method: 'POST', url: `/api/users/${first.id}/erase`, headers: admin.auth, payload: { reason: 'request' } })).statusCode, 204);
    assert.equal((await mailsOf()).length, before.length, 'the address is held by a live account: its mail stays');
    assert.equal((await app.inject({ method: 'GET', url: '/api/users/profile', headers: second.auth })).json().email, first.email);
  });

  it('refuses to erase the last active admin, and an id that never was a user', async () => {
    const { app, admin } = fixture;
    const last = await app.inject({ method: 'POST', url: `/api/users/${admin.id}/erase`, headers: admin.auth, payload: { reason: 'test' } });
    assert.equal(problemOf(last).code, 'last_admin');
    const unknown = await app.inject({ method: 'POST', url: `/api/users/${randomUUID()}/erase`, headers: admin.auth, payload: { reason: 'test' } });
    assert.equal(problemOf(unknown).code, 'not_found');
    assert.equal(problemOf(await app.inject({ method: 'POST', url: `/api/users/${admin.id}/erase`, headers: admin.auth, payload: {} })).code, 'validation_failed');
  });
});
