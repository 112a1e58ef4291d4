import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { inTransaction } from '../../src/db/transaction.js';
import { preparedQuery } from '../../src/db/prepared-query.js';
import { ADMIN_EMAIL, createUser, onPostgres, useAppWithAdmin } from '../helpers/test-app.js';

describe('prepared queries (built and compiled once)', () => {
  const fixture = useAppWithAdmin();
  let builds = 0;
  const userByEmail = preparedQuery((db, email: string) => {
    builds++;
    return db.selectFrom('users').select(['id', 'email']).where('email', '=', email).where('deleted_at', 'is', null);
  });

  it('builds once, and binds each call its own values', async () => {
    const user = await createUser(fixture.app);
    assert.deepEqual(await userByEmail(fixture.db, user.email), [{ id: user.id, email: user.email }]);
    assert.deepEqual(await userByEmail(fixture.db, ADMIN_EMAIL), [{ id: fixture.admin.id, email: ADMIN_EMAIL }]);
    assert.deepEqual(await userByEmail(fixture.db, "nobody@example.com' or '1'='1"), []);
    assert.equal(builds, 1, 'built and compiled on the first call only');
  });

  it('binds values of any kind: arrays, nulls, and constants of the query stay as built', async () => {
    const roles = preparedQuery((db, wanted: readonly string[], missing: string | null) =>
      db.selectFrom('users').select('email').where(sql<boolean>`role = any(${wanted}::text[]) and ${missing}::text is null and status = ${'active'}`),
    );
    assert.deepEqual(await roles(fixture.db, ['admin'], null), [{ email: ADMIN_EMAIL }]);
    assert.deepEqual(await roles(fixture.db, ['nobody'], null), []);
    assert.deepEqual(await roles(fixture.db, ['admin'], 'present'), []);
  });

  it('refuses a query that does not bind its values as given', async () => {
    const changed = preparedQuery((db, email: string) => db.selectFrom('users').select('id').where('email', '=', String(email)));
    await assert.rejects(changed(fixture.db, ADMIN_EMAIL), /must bind value 0 exactly once/);
    const twice = preparedQuery((db, email: string) => db.selectFrom('users').select('id').where('email', '=', email).where('name', '=', email));
    await assert.rejects(twice(fixture.db, ADMIN_EMAIL), /must bind value 0 exactly once/);
  });

  // On PostgreSQL a prepared query outside a transaction runs on the pool itself, skipping Kysely's
  // executor (database.ts); one given a transaction must still run on that transaction's connection.
  it('runs on the transaction it is given, and outside one on a connection of its own', async () => {
    const user = await createUser(fixture.app);
    const nameOf = preparedQuery((db, id: string) => db.selectFrom('users').select('name').where('id', '=', id));
    await assert.rejects(
      inTransaction(fixture.db, async (trx) => {
        await trx.updateTable('users').set({ name: 'Renamed inside' }).where('id', '=', user.id).execute();
        assert.deepEqual(await nameOf(trx, user.id), [{ name: 'Renamed inside' }], 'the transaction sees its own change');
        if (onPostgres) assert.notDeepEqual(await nameOf(fixture.db, user.id), [{ name: 'Renamed inside' }], 'another connection does not see it before the commit');
        throw new Error('roll back');
      }),
      /roll back/,
    );
    assert.notDeepEqual(await nameOf(fixture.db, user.id), [{ name: 'Renamed inside' }], 'rolled back');
    assert.equal((await nameOf(fixture.db, user.id)).length, 1);
  });
});
