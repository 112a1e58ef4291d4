import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { preparedQuery } from '../../src/db/prepared-query.js';
import { ADMIN_EMAIL, createUser, useAppWithAdmin } from '../helpers/test-app.js';

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
});
