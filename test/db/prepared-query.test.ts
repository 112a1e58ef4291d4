import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KyselyPlugin } from 'kysely';
import { preparedQuery } from '../../src/db/prepared-query.js';
import { rewriteWhenCompiled } from '../../src/db/statement-rewrites.js';
import { ADMIN_EMAIL, createUser, useAppWithAdmin } from '../helpers/test-app.js';

const userByEmail = preparedQuery((db, email) => db.selectFrom('users').select(['id', 'email']).where('email', '=', email).where('deleted_at', 'is', null));

describe('prepared queries (built and compiled once)', () => {
  const fixture = useAppWithAdmin();

  it('binds each call its own values', async () => {
    const user = await createUser(fixture.app);
    assert.deepEqual(await userByEmail(fixture.app.db, user.email), [{ id: user.id, email: user.email }]);
    assert.deepEqual(await userByEmail(fixture.app.db, ADMIN_EMAIL), [{ id: fixture.admin.id, email: ADMIN_EMAIL }]);
    assert.deepEqual(await userByEmail(fixture.app.db, "nobody@example.com' or '1'='1"), []);
  });

  it("goes through the plugins of the database it runs on, and honours a plugin's rewrite of the statement", async () => {
    const seen: string[] = [];
    const counting: KyselyPlugin = {
      transformQuery: ({ node, queryId }) => {
        seen.push(node.kind);
        rewriteWhenCompiled(queryId, (text, parameters) => ({ sql: `select count(*)::int as found from (${text}) as inner_rows`, parameters: [...parameters] }));
        return node;
      },
      transformResult: async ({ result }) => ({ ...result, rows: result.rows.map((row) => ({ ...row, seen_by_plugin: true })) }),
    };
    const rows = await userByEmail(fixture.app.db.withPlugin(counting), ADMIN_EMAIL);
    assert.deepEqual(seen, ['SelectQueryNode']);
    assert.deepEqual(rows, [{ found: 1, seen_by_plugin: true }]);
  });

  it('refuses a query that does not bind its values as given', async () => {
    const changed = preparedQuery((db, email) => db.selectFrom('users').select('id').where('email', '=', email.toUpperCase()));
    await assert.rejects(changed(fixture.app.db, ADMIN_EMAIL), /must bind value 0 exactly once/);
    const twice = preparedQuery((db, email) => db.selectFrom('users').select('id').where('email', '=', email).where('name', '=', email));
    await assert.rejects(twice(fixture.app.db, ADMIN_EMAIL), /must bind value 0 exactly once/);
  });
});
