import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/db/tables.js';
import { eraseDeletedUsersPastRetention } from '../../src/privacy/erasure-service.js';
import { createUser, login, onPostgres, useAppWithAdmin, useTwoInstancesWithAdmin, type Session } from '../helpers/test-app.js';
import type { FastifyInstance } from 'fastify';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Deletes users through the API, then moves their deletion `days` into the past (time moves by the rows, never by sleeping). */
async function deletedUsers(app: FastifyInstance, db: Kysely<Database>, admin: Session, count: number, days: number): Promise<string[]> {
  const ids: string[] = [];
  for (let index = 0; index < count; index++) {
    const user = await createUser(app);
    assert.equal((await app.inject({ method: 'DELETE', url: `/api/users/${user.id}`, headers: admin.auth })).statusCode, 204);
    ids.push(user.id);
  }
  await db.updateTable('users').set({ deleted_at: new Date(Date.now() - days * DAY_MS) }).where('id', 'in', ids).execute();
  return ids;
}

const erasures = (db: Kysely<Database>, ids: string[]) =>
  db.selectFrom('events').select(['subject_id', 'actor_id', 'actor_type', 'data']).where('type', '=', 'user.erased').where('subject_id', 'in', ids).execute();

/** API.md section 13, retention: deleted users erased after DELETED_USER_RETENTION_DAYS, ended sessions purged after SESSION_RETENTION_DAYS. */
describe('retention', () => {
  const fixture = useAppWithAdmin();

  it('erases users deleted more than DELETED_USER_RETENTION_DAYS (30) ago, as the service itself, and leaves the recently deleted', async () => {
    const { app, jobs, db, admin } = fixture;
    const due = await deletedUsers(app, db, admin, 2, 31);
    const recent = await deletedUsers(app, db, admin, 1, 29);
    await jobs.runNow('erase-deleted-users');
    const recorded = await erasures(db, [...due, ...recent]);
    assert.deepEqual(recorded.map((event) => event.subject_id).sort(), [...due].sort());
    for (const event of recorded) {
      assert.equal(event.actor_id, null);
      assert.equal(event.actor_type, null);
    }
    const rows = await db.selectFrom('users').select(['id', 'name', 'erased_at']).where('id', 'in', [...due, ...recent]).execute();
    assert.deepEqual(rows.filter((row) => row.erased_at !== null).map((row) => row.id).sort(), [...due].sort());
    assert.ok(rows.filter((row) => due.includes(row.id)).every((row) => row.name === 'Erased user'));
    await jobs.runNow('erase-deleted-users');
    assert.equal((await erasures(db, due)).length, 2, 'a second pass erases nobody again');
    assert.equal(await eraseDeletedUsersPastRetention(db, 0, app.log), 0, 'DELETED_USER_RETENTION_DAYS=0: never');
  });

  it('purges sessions that ended or expired more than SESSION_RETENTION_DAYS (90) ago, with their refresh tokens, and keeps the rest', async () => {
    const { app, jobs, db } = fixture;
    const user = await createUser(app);
    for (let extra = 0; extra < 3; extra++) await login(app, user.email, user.password);
    // Newest first: three sessions to age, then the one createUser opened, which stays open.
    const ids = (await db.selectFrom('sessions').select('id').where('user_id', '=', user.id).orderBy('created_at', 'desc').orderBy('id', 'desc').execute()).map((row) => row.id);
    assert.equal(ids.length, 4);
    const [endedRecentlyId, expiredId, endedId] = ids as [string, string, string, string];
    const openId = (await db.selectFrom('sessions').select('id').where('user_id', '=', user.id).where('id', 'not in', [endedRecentlyId, expiredId, endedId]).executeTakeFirstOrThrow()).id;
    const longAgo = new Date(Date.now() - 91 * DAY_MS);
    await db.updateTable('sessions').set({ ended_at: longAgo }).where('id', '=', endedId).execute();
    await db.updateTable('sessions').set({ expires_at: longAgo }).where('id', '=', expiredId).execute();
    await db.updateTable('sessions').set({ ended_at: new Date(Date.now() - 89 * DAY_MS) }).where('id', '=', endedRecentlyId).execute();
    await jobs.runNow('purge-ended-sessions');
    const left = (await db.selectFrom('sessions').select('id').where('user_id', '=', user.id).execute()).map((row) => row.id).sort();
    assert.deepEqual(left, [endedRecentlyId, openId].sort());
    const tokens = await db.selectFrom('refresh_tokens').select('family_id').where('family_id', 'in', [endedId, expiredId]).execute();
    assert.deepEqual(tokens, [], 'their refresh tokens went with them');
    assert.equal((await app.inject({ method: 'GET', url: '/api/users/profile', headers: user.auth })).statusCode, 200, 'the open session works');
  });
});

describe('retention with two instances (PostgreSQL)', { skip: !onPostgres && 'two instances need PostgreSQL' }, () => {
  const fixture = useTwoInstancesWithAdmin();

  it('erases each due user once, and records it once, when both instances run the pass at the same moment', async () => {
    const { first, second, admin } = fixture;
    const due = await deletedUsers(first.app, first.db, admin, 45, 40);
    await Promise.all([first.jobs.runNow('erase-deleted-users'), second.jobs.runNow('erase-deleted-users'), first.jobs.runNow('erase-deleted-users')]);
    const recorded = await erasures(first.db, due);
    assert.equal(recorded.length, due.length, 'one user.erased per user');
    assert.equal(new Set(recorded.map((event) => event.subject_id)).size, due.length);
    const counts = await sql<{ erased: string }>`select count(*) as erased from users where id = any(${due}) and erased_at is not null`.execute(first.db);
    assert.equal(Number(counts.rows[0]!.erased), due.length);
  });
});
