import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { buildTestApp, createUser, loginAdmin, onPostgres, type Session } from '../helpers/test-app.js';

describe('two instances over one database (PostgreSQL)', { skip: !onPostgres && 'needs PostgreSQL' }, () => {
  it('keep balances, unique SKUs and the last admin intact under mixed traffic', async () => {
    const first = await buildTestApp();
    const second = await buildTestApp({ databaseUrl: first.databaseUrl! });
    try {
      const admin = await loginAdmin(first.app);
      const otherAdmin = await createUser(first.app, { role: 'admin', admin });
      const customers: Session[] = [];
      for (let i = 0; i < 4; i++) customers.push(await createUser(second.app));
      const skus = Array.from({ length: 5 }, (_, index) => `MIX-${index}-${randomUUID().slice(0, 6)}`);
      const instances = [first.app, second.app];

      const requests = Array.from({ length: 240 }, (_, index) => {
        const app = instances[index % 2]!;
        const caller = index % 3 === 0 ? otherAdmin : admin;
        switch (index % 6) {
          case 0:
          case 1:
          case 2: {
            const customer = customers[index % customers.length]!;
            const delta = index % 4 === 0 ? -3 : 2;
            return app.inject({ method: 'PUT', url: `/api/users/${customer.id}/balance`, headers: caller.auth, payload: { delta, reason: `mix ${index}` } });
          }
          case 3:
            return app.inject({
              method: 'POST',
              url: `/api/variants/${randomUUID()}`,
              headers: caller.auth,
              payload: { product_id: `mix-${index}`, sku: skus[index % skus.length]!, name: 'Mixed', price: 10 },
            });
          case 4: {
            const [actor, target] = index % 12 === 4 ? [admin, otherAdmin] : [otherAdmin, admin];
            return app.inject({ method: 'PUT', url: `/api/users/${target.id}/role`, headers: actor.auth, payload: { role: index % 8 === 4 ? 'manager' : 'admin' } });
          }
          default:
            return app.inject({ method: 'GET', url: `/api/users/${customers[0]!.id}/balance/ledger`, headers: caller.auth });
        }
      });
      const responses = await Promise.all(requests);
      for (const response of responses) assert.ok(response.statusCode < 500, `${response.statusCode} ${response.body}`);

      const db = first.db;
      const mismatched = await sql<{ id: string }>`
        select u.id from users u
        left join balance_ledger l on l.user_id = u.id
        group by u.id, u.balance
        having u.balance <> coalesce(sum(l.delta), 0) or u.balance < 0`.execute(db);
      assert.deepEqual(mismatched.rows, [], 'every balance equals the sum of its ledger and is not negative');
      const duplicates = await sql<{ sku: string }>`select lower(sku) as sku from variants group by lower(sku) having count(*) > 1`.execute(db);
      assert.deepEqual(duplicates.rows, [], 'no SKU twice');
      assert.equal((await sql<{ sku: string }>`select sku from variants`.execute(db)).rows.length, skus.length);
      const admins = await db.selectFrom('users').select('id').where('role', '=', 'admin').where('status', '=', 'active').where('deleted_at', 'is', null).execute();
      assert.ok(admins.length >= 1, 'an active admin remains');
    } finally {
      await second.app.close();
      await first.close();
    }
  });
});
