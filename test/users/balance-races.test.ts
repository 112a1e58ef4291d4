import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { createUser, onPostgres, useTwoInstancesWithAdmin, type TestApp } from '../helpers/test-app.js';

describe('balance races (PostgreSQL)', { skip: !onPostgres && 'needs PostgreSQL' }, () => {
  const fixture = useTwoInstancesWithAdmin();

  const state = async (userId: string) => {
    const balance = (await fixture.first.db.selectFrom('users').select('balance').where('id', '=', userId).executeTakeFirstOrThrow()).balance;
    const ledger = await sql<{ entries: number; total: number | null }>`
      select count(*)::int as entries, sum(delta)::bigint as total from balance_ledger where user_id = ${userId}`.execute(fixture.first.db);
    return { balance, entries: ledger.rows[0]!.entries, ledgerTotal: Number(ledger.rows[0]!.total ?? 0) };
  };
  const delta = (app: TestApp, userId: string, amount: number, headers: Record<string, string> = {}) =>
    app.app.inject({
      method: 'PUT',
      url: `/api/users/${userId}/balance`,
      headers: { ...fixture.admin.auth, ...headers },
      payload: { delta: amount, reason: 'race' },
    });

  it('loses no update among 200 concurrent +1 deltas', async () => {
    const user = await createUser(fixture.first.app);
    const responses = await Promise.all(Array.from({ length: 200 }, () => delta(fixture.first, user.id, 1)));
    assert.deepEqual([...new Set(responses.map((response) => response.statusCode))], [200]);
    assert.deepEqual(await state(user.id), { balance: 200, entries: 200, ledgerTotal: 200 });
  });

  it('loses no update with 200 concurrent deltas split across two instances over one database', async () => {
    const user = await createUser(fixture.first.app);
    const responses = await Promise.all(Array.from({ length: 200 }, (_, index) => delta(index % 2 ? fixture.first : fixture.second, user.id, 1)));
    assert.deepEqual([...new Set(responses.map((response) => response.statusCode))], [200]);
    assert.deepEqual(await state(user.id), { balance: 200, entries: 200, ledgerTotal: 200 });
  });

  it('never goes negative under concurrent debits that together exceed the balance', async () => {
    const user = await createUser(fixture.first.app);
    await delta(fixture.first, user.id, 100);
    const responses = await Promise.all(Array.from({ length: 30 }, (_, index) => delta(index % 2 ? fixture.first : fixture.second, user.id, -7)));
    const accepted = responses.filter((response) => response.statusCode === 200).length;
    const refused = responses.filter((response) => response.statusCode === 409);
    assert.equal(accepted, 14, '14 × 7 = 98 fits in 100, a 15th would not');
    assert.equal(refused.length, 16);
    assert.ok(refused.every((response) => response.json().code === 'insufficient_funds'));
    assert.deepEqual(await state(user.id), { balance: 2, entries: 15, ledgerTotal: 2 });
  });

  it('makes exactly one change for 20 concurrent requests with one Idempotency-Key', async () => {
    const user = await createUser(fixture.first.app);
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, index) => delta(index % 2 ? fixture.first : fixture.second, user.id, 40, { 'idempotency-key': `once-${user.id}` })),
    );
    const statuses = responses.map((response) => response.statusCode);
    assert.ok(statuses.every((status) => status === 200 || status === 409), String(statuses));
    assert.ok(statuses.includes(200));
    for (const response of responses.filter((candidate) => candidate.statusCode === 409)) {
      assert.equal(response.json().code, 'idempotency_in_progress');
    }
    for (const response of responses.filter((candidate) => candidate.statusCode === 200)) {
      assert.equal(response.json().balance, 40);
    }
    assert.deepEqual(await state(user.id), { balance: 40, entries: 1, ledgerTotal: 40 });
  });
});
