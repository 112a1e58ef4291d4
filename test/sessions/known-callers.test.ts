import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { ChangeFeed } from '../../src/db/change-feed.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import type { CallerColumns, CallerKey } from '../../src/sessions/caller-query.js';
import { KnownCallers, rowNow, takeTouchDue } from '../../src/sessions/known-callers.js';
import { buildTestApp, createScratchDatabase, createUser, loginAdmin, newVariantBody, onPostgres, openTestDatabase, problemOf, useTwoInstancesWithAdmin, type Session } from '../helpers/test-app.js';

const user: CallerKey = { kind: 'user', userId: 'u1', sessionId: 's1' };
const otherSession: CallerKey = { kind: 'user', userId: 'u1', sessionId: 's2' };
const row = (changes: Partial<CallerColumns> = {}): CallerColumns => ({
  caller__kind: 'user',
  caller__id: 'u1',
  caller__role: 'user',
  caller__status: 'active',
  caller__live: true,
  caller__stale: false,
  caller__scopes: null,
  caller__rate_limit: null,
  caller__credential: null,
  caller__mfa_enrolled: false,
  caller__mfa_age: null,
  caller__expires_in: 3600,
  caller__idle_for: 10,
  ...changes,
});

describe('known callers: what an instance keeps of the callers it admitted', () => {
  it('keeps a live, active caller until a change of its user is notified, or a gap of the feed', () => {
    const feed = new ChangeFeed();
    const callers = new KnownCallers(feed);
    callers.remember(user, row(), callers.mark());
    callers.remember(otherSession, row(), callers.mark());
    const known = callers.get(user)!;
    assert.ok(known && callers.isCurrent(known));
    feed.deliver('caller:someone-else');
    assert.ok(callers.isCurrent(known), "another user's change leaves it");
    feed.deliver('caller:u1');
    assert.equal(callers.isCurrent(known), false, "its user's change forgets it");
    assert.equal(callers.get(user), undefined);
    assert.equal(callers.get(otherSession), undefined, 'and every other session of the user');
    callers.remember(user, row(), callers.mark());
    feed.gap();
    assert.equal(callers.get(user), undefined, 'a gap forgets everything');
    feed.deliver('other-topic:u1');
  });

  it('keeps no row that a change may have overtaken, nor a refused one', () => {
    const feed = new ChangeFeed();
    const callers = new KnownCallers(feed);
    const mark = callers.mark();
    feed.deliver('caller:anyone');
    callers.remember(user, row(), mark);
    assert.equal(callers.get(user), undefined, 'a change heard while the row was read');
    callers.remember(user, row({ caller__status: 'suspended' }), callers.mark());
    assert.equal(callers.get(user), undefined);
    callers.remember(user, row({ caller__live: false }), callers.mark());
    assert.equal(callers.get(user), undefined);
  });

  it("reads the caller again once its credentials end by themselves or it has been known five minutes, and ages a second factor's verification", () => {
    const callers = new KnownCallers(new ChangeFeed());
    callers.remember(user, row({ caller__expires_in: 30, caller__mfa_enrolled: true, caller__mfa_age: 100 }), callers.mark(), 1000);
    assert.ok(callers.get(user, 1000 + 29_000));
    assert.equal(rowNow(callers.get(user, 1000 + 29_000)!, 1000 + 29_000).caller__mfa_age, 129);
    assert.equal(rowNow(callers.get(user, 1000 + 10)!, 1000 + 10).caller__mfa_age, 101, 'rounded up: never younger than it is');
    assert.equal(callers.get(user, 1000 + 30_000), undefined, 'the session ended');
    callers.remember(user, row({ caller__expires_in: null }), callers.mark(), 0);
    assert.ok(callers.get(user, 299_999));
    assert.equal(callers.get(user, 300_000), undefined);
  });

  it('past 50,000 callers, drops those whose time is up first, and only then starts over', () => {
    const callers = new KnownCallers(new ChangeFeed());
    const keyOf = (index: number): CallerKey => ({ kind: 'user', userId: `u${index}`, sessionId: `s${index}` });
    const keys = Array.from({ length: 50_000 }, (_, index) => keyOf(index));
    const start = 1_000_000;
    // Half of them read with a minute left of their session, so their time is up two minutes later.
    keys.forEach((key, index) => callers.remember(key, row({ caller__id: `u${index}`, caller__expires_in: index % 2 === 0 ? 60 : 3600 }), callers.mark(), start));
    const later = start + 2 * 60_000;
    const newcomer = keyOf(50_000);
    callers.remember(newcomer, row({ caller__id: 'u50000' }), callers.mark(), later);
    assert.ok(callers.get(newcomer, later), 'the newcomer is kept');
    assert.equal(callers.get(keys[0]!, later), undefined, 'a caller whose time was up is gone');
    assert.ok(callers.get(keys[1]!, later), 'one with time left stays');
    // 25,001 kept now; fill up again with callers whose time is not up: then everything starts over.
    const more = Array.from({ length: 25_000 }, (_, index) => keyOf(60_000 + index));
    more.forEach((key, index) => callers.remember(key, row({ caller__id: `u${60_000 + index}` }), callers.mark(), later));
    assert.equal(callers.get(keys[1]!, later), undefined, 'all forgotten at the bound');
    assert.ok(callers.get(more.at(-1)!, later), 'the one that came past the bound is kept');
  });

  it('notes the use a minute after it last was, once, then a minute later', () => {
    const callers = new KnownCallers(new ChangeFeed());
    callers.remember(user, row({ caller__idle_for: 50 }), callers.mark(), 0);
    const known = callers.get(user, 0)!;
    assert.equal(takeTouchDue(known, 9_999), false);
    assert.equal(takeTouchDue(known, 10_000), true, 'its last use turned a minute old');
    assert.equal(takeTouchDue(known, 10_001), false, 'once');
    assert.equal(takeTouchDue(known, 70_000), true);
    callers.remember(user, row({ caller__stale: true, caller__idle_for: 3600 }), callers.mark(), 0);
    assert.equal(takeTouchDue(callers.get(user, 0)!, 59_999), false, 'the read that found it stale noted it');
  });
});

describe('the change feed over PostgreSQL (the order known callers rely on)', { skip: !onPostgres && 'needs PostgreSQL' }, () => {
  it("hands a connection a change committed elsewhere before the result of any statement, or the answer to any BEGIN, sent after the commit, even with every connection busy", { timeout: 120_000 }, async () => {
    const scratch = await createScratchDatabase();
    const writer = await openTestDatabase(scratch.url);
    const reader = await openTestDatabase(scratch.url);
    let busy = true;
    let load: Promise<unknown> = Promise.resolve();
    try {
      await migrateToLatest(writer.db);
      const id = randomUUID();
      await sql`insert into users (id, email, name, role, status, password_hash) values (${id}, ${`${id}@example.com`}, 'Feed', 'user', 'active', 'x')`.execute(writer.db);
      let heard = 0;
      let gaps = 0;
      // A gap (a connection that starts listening has missed what came before) counts as heard:
      // it makes the listener forget everything.
      reader.changes.subscribe('caller', (key) => {
        if (key === id) heard++;
        if (key === undefined) gaps++;
      });
      // Every connection the rounds will use opened first, so the rounds see notifications, not gaps.
      await Promise.all(Array.from({ length: 13 }, () => sql`select pg_sleep(0.05)`.execute(reader.db)));
      const gapsBefore = gaps;
      // The reader's connections are kept busy, in and out of transactions, so notifications
      // arrive while they run something else.
      load = Promise.all(
        Array.from({ length: 12 }, async (_, index) => {
          while (busy) {
            if (index % 3 === 0) await reader.db.transaction().execute(async (trx) => sql`select pg_sleep(0.002)`.execute(trx));
            else await sql`select pg_sleep(0.001)`.execute(reader.db);
          }
        }),
      );
      for (let round = 1; round <= 200; round++) {
        // Each listening connection hands the notification over once: at least one must have by then.
        const before = heard + gaps;
        await sql`update users set role = role where id = ${id}`.execute(writer.db);
        await sql`select 1`.execute(reader.db);
        assert.ok(heard + gaps > before, `round ${round}: the change was heard before the next statement's result`);
      }
      assert.equal(gaps, gapsBefore, 'no connection started listening during the rounds: each was a notification');
      // A write's transaction: a change committed before its BEGIN has been heard once BEGIN is answered.
      for (let round = 1; round <= 200; round++) {
        const before = heard + gaps;
        await sql`update users set role = role where id = ${id}`.execute(writer.db);
        const heardAtBegin = await reader.db.transaction().execute(async () => heard + gaps);
        assert.ok(heardAtBegin > before, `transaction ${round}: the change was heard before its BEGIN was answered`);
      }
      assert.equal(gaps, gapsBefore, 'still notifications, not gaps');
    } finally {
      busy = false;
      await load;
      await reader.close();
      await writer.close();
      await scratch.drop();
    }
  });
});

describe('known callers across instances (PostgreSQL)', { skip: !onPostgres && 'needs PostgreSQL' }, () => {
  const fixture = useTwoInstancesWithAdmin();
  const variantOf = async (admin: Session) => {
    const created = await fixture.first.app.inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: { product_id: `known-${randomUUID()}`, sku: `K-${randomUUID()}`, name: 'K', price: 1 } });
    assert.equal(created.statusCode, 201, created.body);
    return created.json().id as string;
  };

  it('refuses every read sent after a session ended on the other instance, while the second instance is busy reading for that caller', { timeout: 120_000 }, async () => {
    const { first, second, admin } = fixture;
    const variantId = await variantOf(admin);
    for (let round = 0; round < 30; round++) {
      const user = await createUser(first.app);
      const read = () => second.app.inject({ method: 'GET', url: `/api/variants/${variantId}`, headers: user.auth });
      assert.equal((await read()).statusCode, 200, 'known to the second instance now');
      // Reads keep going on the second instance while the first ends the session.
      let ended = false;
      const after: number[] = [];
      const readers = Array.from({ length: 6 }, async () => {
        while (!ended) {
          const sentAfterTheEnd = ended;
          const response = await read();
          if (sentAfterTheEnd) after.push(response.statusCode);
        }
        for (let index = 0; index < 3; index++) after.push((await read()).statusCode);
      });
      const logout = await first.app.inject({ method: 'POST', url: '/api/auth/logout', payload: { refresh_token: user.refreshToken } });
      assert.equal(logout.statusCode, 204);
      ended = true;
      after.push((await read()).statusCode);
      await Promise.all(readers);
      assert.deepEqual([...new Set(after)], [401], `round ${round}: every read sent after the logout answered is refused`);
    }
  });

  it('refuses every write sent after a session ended on the other instance, while the second instance is busy writing for that caller', { timeout: 120_000 }, async () => {
    const { first, second, admin } = fixture;
    const created = await first.app.inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: { ...newVariantBody(1_000_000, 'known-write') } });
    assert.equal(created.statusCode, 201, created.body);
    const variantId = created.json().id as string;
    for (let round = 0; round < 20; round++) {
      const manager = await createUser(first.app, { role: 'manager', admin });
      const reserve = () => second.app.inject({ method: 'POST', url: '/api/reservations', headers: manager.auth, payload: { lines: [{ variant_id: variantId, quantity: 1 }] } });
      assert.equal((await reserve()).statusCode, 201, 'known to the second instance now');
      let ended = false;
      const statuses: number[] = [];
      const after: number[] = [];
      const writers = Array.from({ length: 4 }, async () => {
        while (!ended) {
          const sentAfterTheEnd = ended;
          const response = await reserve();
          statuses.push(response.statusCode);
          if (sentAfterTheEnd) after.push(response.statusCode);
        }
        for (let index = 0; index < 2; index++) after.push((await reserve()).statusCode);
      });
      const logout = await first.app.inject({ method: 'POST', url: '/api/auth/logout', payload: { refresh_token: manager.refreshToken } });
      assert.equal(logout.statusCode, 204);
      ended = true;
      after.push((await reserve()).statusCode);
      await Promise.all(writers);
      assert.deepEqual([...new Set(after)], [401], `round ${round}: every write sent after the logout answered is refused`);
      const made = await first.db.selectFrom('reservations').select('id').where('created_by', '=', manager.id).execute();
      assert.equal(made.length, 1 + statuses.filter((status) => status === 201).length, `round ${round}: a reservation for each 201, none for a refusal`);
    }
  });

  it('applies a role change, a suspension and a second factor now required, made on one instance, to the next read on the other', async () => {
    const { first, second, admin } = fixture;
    const manager = await createUser(first.app, { role: 'manager', admin });
    const staffRead = () => second.app.inject({ method: 'GET', url: '/api/users?limit=1', headers: manager.auth });
    assert.equal((await staffRead()).statusCode, 200);
    assert.equal((await staffRead()).statusCode, 200, 'known now');
    assert.equal((await first.app.inject({ method: 'PUT', url: `/api/users/${manager.id}/role`, headers: admin.auth, payload: { role: 'user' } })).statusCode, 200);
    assert.equal(problemOf(await staffRead()).code, 'forbidden', 'the new role applies');
    assert.equal((await first.app.inject({ method: 'PUT', url: `/api/users/${manager.id}/role`, headers: admin.auth, payload: { role: 'manager' } })).statusCode, 200);
    assert.equal((await staffRead()).statusCode, 200);
    assert.equal((await first.app.inject({ method: 'PUT', url: `/api/users/${manager.id}/status`, headers: admin.auth, payload: { status: 'suspended' } })).statusCode, 200);
    assert.equal(problemOf(await staffRead()).code, 'account_suspended');

    // A confirmed factor taken away (straight in the table, as a reset would) from a user of a
    // role that must have one: known with its factor, refused without it on the next read.
    const variantId = await variantOf(admin);
    const other = await loginAdmin(second.app);
    await sql`insert into mfa_factors (id, user_id, type, name, totp_secret, confirmed_at, created_at) values (${randomUUID()}, ${other.id}, 'totp', 'Phone', 'JBSWY3DPEHPK3PXP', now(), now())`.execute(first.db);
    const strict = await buildTestApp({ databaseUrl: first.databaseUrl!, environment: { MFA_REQUIRED_ROLES: 'admin' } });
    try {
      const adminRead = () => strict.app.inject({ method: 'GET', url: `/api/variants/${variantId}`, headers: other.auth });
      assert.equal((await adminRead()).statusCode, 200);
      assert.equal((await adminRead()).statusCode, 200, 'known, with its factor');
      await sql`delete from mfa_factors where user_id = ${other.id}`.execute(first.db);
      assert.equal(problemOf(await adminRead()).code, 'mfa_enrollment_required');
    } finally {
      await strict.app.close();
    }
  });
});
