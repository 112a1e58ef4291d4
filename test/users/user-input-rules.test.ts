import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { buildTestApp, createUser, loginAdmin, problemOf, uniqueEmail, type Session, type TestApp } from '../helpers/test-app.js';

describe('users: replies people can read, merge patches, text rules', () => {
  let testApp: TestApp;
  let admin: Session;
  before(async () => {
    testApp = await buildTestApp();
    admin = await loginAdmin(testApp.app);
  });
  after(() => testApp.close());

  const inject = (request: InjectOptions) => testApp.app.inject(request);
  const storedUser = (id: string) => testApp.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();

  it('lists every problem of a request in plain words, never a pattern or a schema keyword', async () => {
    const response = await inject({
      method: 'POST',
      url: '/api/auth/register',
      payload: { email: 'not-an-email', password: 'short', name: 'x'.repeat(101), phone: 'call me', role: 'admin' },
    });
    assert.equal(response.statusCode, 400);
    const problem = problemOf(response);
    assert.equal(problem.code, 'validation_failed');
    assert.deepEqual(
      [...(problem.errors ?? [])].sort((a, b) => a.path.localeCompare(b.path)),
      [
        { path: '/email', message: 'must be a valid email address' },
        { path: '/name', message: 'must be at most 100 characters' },
        { path: '/password', message: 'must be at least 8 characters' },
        { path: '/phone', message: 'must be digits, spaces and + - ( ) . with at least one digit' },
        { path: '/role', message: 'is not an allowed field' },
      ],
    );
    const role = await inject({ method: 'PUT', url: `/api/users/${admin.id}/role`, headers: admin.auth, payload: { role: 'owner' } });
    assert.deepEqual(problemOf(role).errors, [{ path: '/role', message: 'must be one of: user, manager, admin' }]);
    const delta = await inject({ method: 'PUT', url: `/api/users/${admin.id}/balance`, headers: admin.auth, payload: { delta: 0, reason: 'x' } });
    assert.deepEqual(problemOf(delta).errors, [{ path: '/delta', message: 'must not be 0' }]);
    const phone = await inject({ method: 'PUT', url: '/api/users/profile', headers: admin.auth, payload: { name: 'A', email: admin.email, phone: 5 } });
    assert.deepEqual(problemOf(phone).errors, [{ path: '/phone', message: 'must be a string or null' }]);
    for (const text of [response.body, role.body, delta.body, phone.body]) {
      assert.doesNotMatch(text, /\^|\$|must match|must NOT|must be equal to constant|anyOf|oneOf/);
    }
  });

  it('refuses an If-Match that is not a quoted version with 400 that says how to quote it', async () => {
    const response = await inject({ method: 'PUT', url: '/api/users/profile', headers: { ...admin.auth, 'if-match': '2' }, payload: { name: 'A', email: admin.email } });
    assert.equal(response.statusCode, 400);
    const problem = problemOf(response);
    assert.equal(problem.code, 'validation_failed');
    assert.deepEqual(problem.errors, [{ path: '/if-match', message: 'must be the ETag you read: a version in double quotes, such as "3" (or *)' }]);
  });

  it('patches the profile as a JSON merge patch: left out stays, phone null clears, {} changes nothing', async () => {
    const user = await createUser(testApp.app, { name: 'Patch Me' });
    await inject({ method: 'PUT', url: '/api/users/profile', headers: user.auth, payload: { name: 'Patch Me', email: user.email, phone: '+1 555 0100' } });
    const patched = await inject({
      method: 'PATCH',
      url: '/api/users/profile',
      headers: { ...user.auth, 'content-type': 'application/merge-patch+json', 'if-match': '"2"' },
      payload: JSON.stringify({ name: '  New Name  ' }),
    });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.deepEqual({ name: patched.json().name, phone: patched.json().phone, email: patched.json().email }, { name: 'New Name', phone: '+1 555 0100', email: user.email });
    assert.equal(patched.headers.etag, '"3"');
    const cleared = await inject({ method: 'PATCH', url: '/api/users/profile', headers: user.auth, payload: { phone: null } });
    assert.equal(cleared.json().phone, null);
    const nothing = await inject({ method: 'PATCH', url: '/api/users/profile', headers: user.auth, payload: {} });
    assert.equal(nothing.json().version, 4);
    const required = await inject({ method: 'PATCH', url: '/api/users/profile', headers: user.auth, payload: { email: null } });
    assert.equal(required.statusCode, 400);
    const smuggled = await inject({ method: 'PATCH', url: '/api/users/profile', headers: user.auth, payload: { role: 'admin' } });
    assert.equal(smuggled.statusCode, 400);
    const taken = await inject({ method: 'PATCH', url: '/api/users/profile', headers: user.auth, payload: { email: admin.email.toUpperCase(), current_password: user.password } });
    assert.equal(problemOf(taken).code, 'email_taken');
    const stale = await inject({ method: 'PATCH', url: '/api/users/profile', headers: { ...user.auth, 'if-match': '"1"' }, payload: { name: 'X' } });
    assert.equal(problemOf(stale).code, 'precondition_failed');
    const text = await inject({ method: 'PATCH', url: '/api/users/profile', headers: { ...user.auth, 'content-type': 'text/plain' }, payload: 'name=x' });
    assert.equal(text.statusCode, 415);
    assert.equal((await storedUser(user.id))?.name, 'New Name');
  });

  it('keeps names trimmed and refuses blank ones', async () => {
    const email = uniqueEmail();
    const registered = await inject({ method: 'POST', url: '/api/auth/register', payload: { email, password: 'password-123', name: '  Spaced Out ' } });
    assert.equal(registered.statusCode, 201);
    assert.equal((await storedUser(registered.json().id))?.name, 'Spaced Out');
    const blank = await inject({ method: 'POST', url: '/api/auth/register', payload: { email: uniqueEmail(), password: 'password-123', name: ' \t ' } });
    assert.deepEqual(problemOf(blank).errors, [{ path: '/name', message: 'must not be blank' }]);
  });

  it('refuses a new password equal to the current one', async () => {
    const user = await createUser(testApp.app);
    const response = await inject({
      method: 'PUT',
      url: '/api/users/change-password',
      headers: user.auth,
      payload: { current_password: user.password, new_password: user.password },
    });
    assert.equal(response.statusCode, 400);
    assert.deepEqual(problemOf(response).errors, [{ path: '/new_password', message: 'must differ from the current password' }]);
  });

  it('takes an optional reason on role, status and delete, records it with the change, and refuses a blank one', async () => {
    const user = await createUser(testApp.app);
    const role = await inject({ method: 'PUT', url: `/api/users/${user.id}/role`, headers: admin.auth, payload: { role: 'manager', reason: ' Runs the catalogue ' } });
    assert.equal(role.statusCode, 200);
    const status = await inject({ method: 'PUT', url: `/api/users/${user.id}/status`, headers: admin.auth, payload: { status: 'suspended', reason: 'Review' } });
    assert.equal(status.statusCode, 200);
    const blank = await inject({ method: 'PUT', url: `/api/users/${user.id}/status`, headers: admin.auth, payload: { status: 'active', reason: '  ' } });
    assert.equal(blank.statusCode, 400);
    assert.deepEqual(problemOf(blank).errors, [{ path: '/reason', message: 'must not be blank' }]);
    const removed = await inject({ method: 'DELETE', url: `/api/users/${user.id}?reason=Closed%20on%20request`, headers: admin.auth });
    assert.equal(removed.statusCode, 204);
    const events = await testApp.db.selectFrom('events').select(['type', 'data']).where('subject_id', '=', user.id).where('type', 'in', ['user.role_changed', 'user.status_changed', 'user.deleted']).orderBy('created_at').execute();
    assert.deepEqual(
      events.map((event) => [event.type, (event.data as { reason?: string }).reason]),
      [['user.role_changed', 'Runs the catalogue'], ['user.status_changed', 'Review'], ['user.deleted', 'Closed on request']],
      'each reason is recorded, trimmed; the blank one changed nothing',
    );
  });

  it("lets an admin read a deleted user's ledger; the user is 404 otherwise", async () => {
    const user = await createUser(testApp.app);
    await inject({ method: 'PUT', url: `/api/users/${user.id}/balance`, headers: admin.auth, payload: { delta: 300, reason: 'Welcome credit' } });
    assert.equal((await inject({ method: 'DELETE', url: `/api/users/${user.id}`, headers: admin.auth })).statusCode, 204);
    const ledger = await inject({ method: 'GET', url: `/api/users/${user.id}/balance/ledger`, headers: admin.auth });
    assert.equal(ledger.statusCode, 200);
    assert.deepEqual(ledger.json().items.map((entry: { delta: number }) => entry.delta), [300]);
    assert.equal((await inject({ method: 'GET', url: `/api/users/${user.id}`, headers: admin.auth })).statusCode, 404);
  });

  it('answers a conditional GET of a user or the profile with 304 when nothing changed', async () => {
    const user = await createUser(testApp.app);
    const current = await inject({ method: 'GET', url: '/api/users/profile', headers: user.auth });
    const etag = String(current.headers.etag);
    for (const url of ['/api/users/profile', `/api/users/${user.id}`]) {
      const unchanged = await inject({ method: 'GET', url, headers: { ...user.auth, 'if-none-match': etag } });
      assert.equal(unchanged.statusCode, 304, url);
      assert.equal(unchanged.body, '');
    }
    await inject({ method: 'PATCH', url: '/api/users/profile', headers: user.auth, payload: { name: 'Changed' } });
    const changed = await inject({ method: 'GET', url: '/api/users/profile', headers: { ...user.auth, 'if-none-match': etag } });
    assert.equal(changed.statusCode, 200);
  });
});
