import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { sql } from 'kysely';
import { deleteExpiredIdempotencyKeys } from '../../src/http/idempotency-key-repository.js';
import { buildTestApp, createUser, loginAdmin, problemOf, type Session, type TestApp } from '../helpers/test-app.js';

describe('balance', () => {
  let testApp: TestApp;
  let admin: Session;

  before(async () => {
    testApp = await buildTestApp();
    admin = await loginAdmin(testApp.app);
  });
  after(() => testApp.close());

  const inject = (options: InjectOptions) => testApp.app.inject(options);
  const changeBalance = (userId: string, payload: unknown, headers: Record<string, string> = {}) =>
    inject({ method: 'PUT', url: `/api/users/${userId}/balance`, headers: { ...admin.auth, ...headers }, payload: payload as object });
  const ledgerSum = async (userId: string) => {
    const result = await sql<{ total: number | null }>`select sum(delta)::bigint as total from balance_ledger where user_id = ${userId}`.execute(testApp.db);
    return Number(result.rows[0]?.total ?? 0);
  };
  const storedBalance = async (userId: string) =>
    (await testApp.db.selectFrom('users').select('balance').where('id', '=', userId).executeTakeFirstOrThrow()).balance;

  it('adds a delta and sets a balance, each with a ledger entry in the same currency', async () => {
    const user = await createUser(testApp.app);
    const credited = await changeBalance(user.id, { delta: 1500, reason: 'welcome credit' });
    assert.equal(credited.statusCode, 200);
    assert.equal(credited.json().balance, 1500);
    assert.equal(credited.json().currency, 'USD');
    assert.equal(credited.headers.etag, `"${credited.json().version}"`);
    const set = await changeBalance(user.id, { balance: 200, reason: 'correction' });
    assert.equal(set.json().balance, 200);
    const same = await changeBalance(user.id, { balance: 200, reason: 'no-op set' });
    assert.equal(same.statusCode, 200);

    const ledger = await inject({ method: 'GET', url: `/api/users/${user.id}/balance/ledger`, headers: admin.auth });
    assert.equal(ledger.statusCode, 200);
    const entries = ledger.json().items;
    assert.deepEqual(
      entries.map((entry: { delta: number; balance_after: number; reason: string }) => [entry.delta, entry.balance_after, entry.reason]),
      [
        [0, 200, 'no-op set'],
        [-1300, 200, 'correction'],
        [1500, 1500, 'welcome credit'],
      ],
    );
    assert.equal(entries[0].actor_id, admin.id);
    assert.equal(entries[0].user_id, user.id);
    assert.equal(entries[0].currency, 'USD');
    assert.equal(await ledgerSum(user.id), await storedBalance(user.id));
  });

  it('refuses to go below zero with 409 insufficient_funds, changing nothing', async () => {
    const user = await createUser(testApp.app);
    await changeBalance(user.id, { delta: 100, reason: 'seed' });
    const response = await changeBalance(user.id, { delta: -101, reason: 'too much' });
    assert.equal(response.statusCode, 409);
    assert.equal(problemOf(response).code, 'insufficient_funds');
    const huge = await changeBalance(user.id, { delta: -2e15, reason: 'far too much' });
    assert.equal(huge.statusCode, 409);
    assert.equal(problemOf(huge).code, 'insufficient_funds');
    assert.equal(await storedBalance(user.id), 100);
    assert.equal(await ledgerSum(user.id), 100);
  });

  it('refuses a result above 1e15 with 400 validation_failed', async () => {
    const user = await createUser(testApp.app);
    await changeBalance(user.id, { balance: 1e15, reason: 'max' });
    const response = await changeBalance(user.id, { delta: 1, reason: 'over' });
    assert.equal(response.statusCode, 400);
    assert.equal((await changeBalance(user.id, { delta: 2e15, reason: 'way over' })).statusCode, 400);
    assert.equal(problemOf(response).code, 'validation_failed');
    assert.equal(await storedBalance(user.id), 1e15);
  });

  it('validates the body: exactly one of delta and balance, a non-zero integer delta, a reason of 1..200', async () => {
    const user = await createUser(testApp.app);
    const bodies = [
      { reason: 'nothing' },
      { delta: 1, balance: 1, reason: 'both' },
      { delta: 0, reason: 'zero' },
      { delta: 1.5, reason: 'fraction' },
      { delta: '5', reason: 'string' },
      { balance: -1, reason: 'negative' },
      { balance: 1e15 + 1, reason: 'too big' },
      { delta: 1 },
      { delta: 1, reason: '' },
      { delta: 1, reason: 'x'.repeat(201) },
      { delta: 1, reason: 'extra', note: 'x' },
    ];
    for (const body of bodies) {
      const response = await changeBalance(user.id, body);
      assert.equal(response.statusCode, 400, JSON.stringify(body));
      assert.equal(problemOf(response).code, 'validation_failed');
    }
    assert.equal(await storedBalance(user.id), 0);
    const longKey = await changeBalance(user.id, { delta: 1, reason: 'key' }, { 'idempotency-key': 'k'.repeat(256) });
    assert.equal(longKey.statusCode, 400);
    assert.equal(problemOf(longKey).code, 'validation_failed');
  });

  it('honours If-Match and answers 404 for an unknown or deleted user', async () => {
    const user = await createUser(testApp.app);
    const stale = await changeBalance(user.id, { delta: 5, reason: 'stale' }, { 'if-match': '"9"' });
    assert.equal(stale.statusCode, 412);
    assert.equal(await storedBalance(user.id), 0);
    const fresh = await changeBalance(user.id, { delta: 5, reason: 'fresh' }, { 'if-match': '"1"' });
    assert.equal(fresh.statusCode, 200);
    const missing = await changeBalance('00000000-0000-4000-8000-000000000000', { delta: 5, reason: 'nobody' });
    assert.equal(missing.statusCode, 404);
  });

  it("lets a user read its own ledger but not another's; keeps a deleted user's ledger", async () => {
    const user = await createUser(testApp.app);
    const other = await createUser(testApp.app);
    await changeBalance(user.id, { delta: 10, reason: 'mine' });
    assert.equal((await inject({ method: 'GET', url: `/api/users/${user.id}/balance/ledger`, headers: user.auth })).statusCode, 200);
    const forbidden = await inject({ method: 'GET', url: `/api/users/${user.id}/balance/ledger`, headers: other.auth });
    assert.equal(forbidden.statusCode, 403);
    const ownChange = await inject({ method: 'PUT', url: `/api/users/${user.id}/balance`, headers: user.auth, payload: { delta: 5, reason: 'self' } });
    assert.equal(ownChange.statusCode, 403);
    await inject({ method: 'DELETE', url: `/api/users/${user.id}`, headers: admin.auth });
    assert.equal(await ledgerSum(user.id), 10, 'the ledger rows stay after a soft delete');
  });

  it('pages the ledger newest first with a cursor and include_total', async () => {
    const user = await createUser(testApp.app);
    for (let i = 1; i <= 5; i++) await changeBalance(user.id, { delta: i, reason: `step ${i}` });
    const reasons: string[] = [];
    let cursor: string | null = null;
    do {
      const url: string = `/api/users/${user.id}/balance/ledger?limit=2&include_total=true${cursor ? `&cursor=${cursor}` : ''}`;
      const page = await inject({ method: 'GET', url, headers: admin.auth });
      assert.equal(page.json().total, 5);
      reasons.push(...page.json().items.map((entry: { reason: string }) => entry.reason));
      cursor = page.json().next_cursor;
    } while (cursor);
    assert.deepEqual(reasons, ['step 5', 'step 4', 'step 3', 'step 2', 'step 1']);
  });

  describe('Idempotency-Key', () => {
    it('replays the first reply for the same key and body, with no second change', async () => {
      const user = await createUser(testApp.app);
      const first = await changeBalance(user.id, { delta: 250, reason: 'refund #1' }, { 'idempotency-key': 'refund-1' });
      const repeat = await changeBalance(user.id, { reason: 'refund #1', delta: 250 }, { 'idempotency-key': 'refund-1' });
      assert.equal(first.statusCode, 200);
      assert.equal(repeat.statusCode, 200);
      assert.deepEqual(repeat.json(), first.json());
      assert.equal(repeat.headers.etag, first.headers.etag);
      assert.equal(await storedBalance(user.id), 250);
      assert.equal(await ledgerSum(user.id), 250);
    });

    it('answers 422 idempotency_key_reused for the same key with another body', async () => {
      const user = await createUser(testApp.app);
      await changeBalance(user.id, { delta: 1, reason: 'a' }, { 'idempotency-key': 'reuse' });
      const other = await changeBalance(user.id, { delta: 2, reason: 'a' }, { 'idempotency-key': 'reuse' });
      assert.equal(other.statusCode, 422);
      assert.equal(problemOf(other).code, 'idempotency_key_reused');
      assert.equal(await storedBalance(user.id), 1);
    });

    it('replays a refusal too, as problem+json', async () => {
      const user = await createUser(testApp.app);
      const first = await changeBalance(user.id, { delta: -5, reason: 'debit' }, { 'idempotency-key': 'debit-1' });
      await changeBalance(user.id, { delta: 50, reason: 'top-up' });
      const repeat = await changeBalance(user.id, { delta: -5, reason: 'debit' }, { 'idempotency-key': 'debit-1' });
      assert.equal(first.statusCode, 409);
      assert.equal(repeat.statusCode, 409);
      assert.equal(problemOf(repeat).code, 'insufficient_funds');
      assert.equal(await storedBalance(user.id), 50);
    });

    it('scopes keys to the caller', async () => {
      const user = await createUser(testApp.app);
      const secondAdmin = await createUser(testApp.app, { role: 'admin', admin });
      await changeBalance(user.id, { delta: 7, reason: 'shared key' }, { 'idempotency-key': 'same-key' });
      const other = await inject({
        method: 'PUT',
        url: `/api/users/${user.id}/balance`,
        headers: { ...secondAdmin.auth, 'idempotency-key': 'same-key' },
        payload: { delta: 7, reason: 'shared key' },
      });
      assert.equal(other.statusCode, 200);
      assert.equal(other.json().balance, 14, "another caller's key is its own: a second change");
    });

    it('answers 409 idempotency_in_progress while the first request holds the key, and purges expired keys', async () => {
      const user = await createUser(testApp.app);
      const now = Date.now();
      await testApp.db
        .insertInto('idempotency_keys')
        .values({
          owner_id: admin.id,
          key: 'held',
          request_fingerprint: 'x',
          state: 'in_progress',
          response_status: null,
          response_body: null,
          locked_until: new Date(now + 60_000),
          expires_at: new Date(now + 86_400_000),
        })
        .execute();
      const response = await changeBalance(user.id, { delta: 1, reason: 'x' }, { 'idempotency-key': 'held' });
      assert.equal(response.statusCode, 422, 'a different body is 422 even while held');
      const fingerprinted = await changeBalance(user.id, { delta: 1, reason: 'x' }, { 'idempotency-key': 'held-2' });
      assert.equal(fingerprinted.statusCode, 200);
      await testApp.db
        .updateTable('idempotency_keys')
        .set({ state: 'in_progress', locked_until: new Date(now + 60_000) })
        .where('key', '=', 'held-2')
        .execute();
      const inProgress = await changeBalance(user.id, { delta: 1, reason: 'x' }, { 'idempotency-key': 'held-2' });
      assert.equal(inProgress.statusCode, 409);
      assert.equal(problemOf(inProgress).code, 'idempotency_in_progress');

      await testApp.db.updateTable('idempotency_keys').set({ expires_at: new Date(now - 1) }).where('key', '=', 'held').execute();
      assert.ok((await deleteExpiredIdempotencyKeys(testApp.db)) >= 1);
      const left = await testApp.db.selectFrom('idempotency_keys').select('key').where('key', '=', 'held').execute();
      assert.equal(left.length, 0);
    });
  });
});
