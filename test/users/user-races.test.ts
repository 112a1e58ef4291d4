import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, createUser, login, loginAdmin, onPostgres, uniqueEmail, type Session, type TestApp } from '../helpers/test-app.js';

// PGlite is one connection, so races need a real server.
describe('user races (PostgreSQL)', { skip: !onPostgres && 'needs PostgreSQL' }, () => {
  let testApp: TestApp;
  let admin: Session;

  before(async () => {
    testApp = await buildTestApp();
    admin = await loginAdmin(testApp.app);
  });
  after(() => testApp?.close());

  const activeAdminCount = async () =>
    (
      await testApp.db
        .selectFrom('users')
        .select('id')
        .where('role', '=', 'admin')
        .where('status', '=', 'active')
        .where('deleted_at', 'is', null)
        .execute()
    ).length;

  it('never leaves zero active admins when two admins demote each other at once (30 rounds)', async () => {
    let other = await createUser(testApp.app, { role: 'admin', admin });
    let firstAdmin = admin;
    for (let round = 0; round < 30; round++) {
      const action = round % 3;
      const request = (caller: Session, target: Session) =>
        action === 0
          ? { method: 'PUT' as const, url: `/api/users/${target.id}/role`, headers: caller.auth, payload: { role: 'user' } }
          : action === 1
            ? { method: 'PUT' as const, url: `/api/users/${target.id}/status`, headers: caller.auth, payload: { status: 'suspended' } }
            : { method: 'PUT' as const, url: `/api/users/${target.id}/role`, headers: caller.auth, payload: { role: 'manager' } };
      const [first, second] = await Promise.all([
        testApp.app.inject(request(firstAdmin, other)),
        testApp.app.inject(request(other, firstAdmin)),
      ]);
      const statuses = [first.statusCode, second.statusCode];
      assert.equal(statuses.filter((status) => status === 200).length, 1, `round ${round}: ${statuses}`);
      assert.ok(statuses.every((status) => [200, 409, 403].includes(status)), `round ${round}: ${statuses}`);
      assert.equal(await activeAdminCount(), 1, `round ${round}`);
      // Put the loser back as an active admin for the next round.
      const survivor = first.statusCode === 200 ? firstAdmin : other;
      const loser = survivor === firstAdmin ? other : firstAdmin;
      for (const payload of [{ role: 'admin' }, { status: 'active' }]) {
        const url = `/api/users/${loser.id}/${'role' in payload ? 'role' : 'status'}`;
        const restored = await testApp.app.inject({ method: 'PUT', url, headers: survivor.auth, payload });
        assert.equal(restored.statusCode, 200);
      }
      assert.equal(await activeAdminCount(), 2);
      // A suspension ended the loser's sessions: it signs in again.
      if (action === 1) {
        const again = await login(testApp.app, loser.email, loser.password);
        if (loser === firstAdmin) firstAdmin = again;
        else other = again;
      }
    }
  });

  it('lets exactly one of 20 concurrent registrations with one email through', async () => {
    const email = uniqueEmail('race');
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        testApp.app.inject({
          method: 'POST',
          url: '/api/auth/register',
          payload: { email: index % 2 ? email : email.toUpperCase(), password: 'password-123', name: `Racer ${index}` },
        }),
      ),
    );
    const statuses = responses.map((response) => response.statusCode);
    assert.equal(statuses.filter((status) => status === 201).length, 1, String(statuses));
    assert.equal(statuses.filter((status) => status === 409).length, 19);
    const rows = await testApp.db
      .selectFrom('users')
      .select('id')
      .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
      .execute();
    assert.equal(rows.length, 1);
  });
});
