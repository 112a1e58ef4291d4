import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { buildTestApp, createUser, loginAdmin, problemOf, useAppWithAdmin, type Session, type TestApp } from '../helpers/test-app.js';
import { bearer, enrolTotp, loginWithTotp } from './mfa-helpers.js';

const STEP_UP_CHALLENGE = 'Bearer error="insufficient_user_authentication", error_description="A second factor verified within 900 seconds is required", max_age=900';

/** API.md section 12: step-up before sensitive actions, and the admin reset. */
describe('second factors: step-up and the admin reset', () => {
  const fixture = useAppWithAdmin();
  /** The session's second factor was verified longer ago than MFA_STEP_UP_MAX_AGE. */
  const ageVerification = (session: Session, seconds: number) =>
    sql`update sessions set mfa_verified_at = now() - make_interval(secs => ${seconds}) where user_id = ${session.id}`.execute(fixture.db);

  it('asks a user with a factor for a fresh one before each sensitive action, and never one without', async () => {
    const { app } = fixture;
    const admin = await createUser(app, { role: 'admin' });
    const customer = await createUser(app);
    // Without a factor: never asked.
    assert.equal((await app.inject({ method: 'PUT', url: `/api/users/${customer.id}/balance`, headers: admin.auth, payload: { delta: 5, reason: 'goodwill' } })).statusCode, 200);
    const { device } = await enrolTotp(app, admin);
    await ageVerification(admin, 901);
    const sensitive = [
      { method: 'PUT', url: `/api/users/${customer.id}/balance`, payload: { delta: 5, reason: 'goodwill' } },
      { method: 'PUT', url: `/api/users/${customer.id}/role`, payload: { role: 'manager' } },
      { method: 'PUT', url: `/api/users/${customer.id}/status`, payload: { status: 'suspended' } },
      { method: 'DELETE', url: `/api/users/${customer.id}` },
      { method: 'DELETE', url: `/api/users/${customer.id}/mfa` },
      { method: 'PUT', url: '/api/users/change-password', payload: { current_password: admin.password, new_password: 'another-password-1' } },
      { method: 'POST', url: '/api/clients', payload: { name: 'x', scopes: ['variants:read'] } },
      { method: 'PATCH', url: `/api/clients/${randomUUID()}`, payload: { name: 'x' } },
      { method: 'DELETE', url: `/api/clients/${randomUUID()}` },
      { method: 'POST', url: `/api/clients/${randomUUID()}/secrets` },
      { method: 'DELETE', url: `/api/clients/${randomUUID()}/secrets/${randomUUID()}` },
      { method: 'POST', url: '/api/webhooks', payload: { url: 'https://example.com/hook', events: ['*'] } },
      { method: 'PUT', url: `/api/webhooks/${randomUUID()}`, payload: { url: 'https://example.com/hook', events: ['*'] } },
      { method: 'DELETE', url: `/api/webhooks/${randomUUID()}` },
      { method: 'POST', url: '/api/signing-keys/rotate' },
      { method: 'DELETE', url: `/api/auth/mfa/factors/${randomUUID()}` },
      { method: 'POST', url: '/api/auth/mfa/recovery-codes' },
      { method: 'POST', url: '/api/auth/mfa/totp', payload: { name: 'Another phone' } },
      { method: 'POST', url: `/api/auth/mfa/totp/${randomUUID()}/confirm`, payload: { code: '123456' } },
      { method: 'POST', url: '/api/auth/mfa/webauthn/registration-options' },
      { method: 'POST', url: '/api/auth/mfa/webauthn', payload: { response: {} } },
      { method: 'GET', url: `/api/users/${customer.id}/export` },
      { method: 'POST', url: `/api/users/${customer.id}/erase`, payload: { reason: 'request' } },
      { method: 'DELETE', url: '/api/users/profile', payload: { password: admin.password } },
    ] as const;
    for (const request of sensitive) {
      const refused = await app.inject({ ...request, headers: admin.auth });
      assert.equal(refused.statusCode, 403, `${request.method} ${request.url}: ${refused.body}`);
      assert.equal(problemOf(refused).code, 'step_up_required', `${request.method} ${request.url}`);
      assert.equal(refused.headers['www-authenticate'], STEP_UP_CHALLENGE);
    }
    assert.equal((await app.inject({ method: 'GET', url: `/api/users/${customer.id}`, headers: admin.auth })).json().balance, 5, 'nothing changed');
    // Reads and other writes are not sensitive.
    assert.equal((await app.inject({ method: 'GET', url: '/api/users', headers: admin.auth })).statusCode, 200);
    assert.equal((await app.inject({ method: 'PATCH', url: '/api/users/profile', headers: admin.auth, payload: { name: 'Still me' } })).statusCode, 200);

    const wrong = await app.inject({ method: 'POST', url: '/api/auth/mfa/verify', headers: admin.auth, payload: { code: device.wrong() } });
    assert.equal(problemOf(wrong).code, 'invalid_mfa_code');
    const verified = await app.inject({ method: 'POST', url: '/api/auth/mfa/verify', headers: admin.auth, payload: { code: device.next() } });
    assert.equal(verified.statusCode, 200, verified.body);
    assert.equal((await app.inject({ method: 'PUT', url: `/api/users/${customer.id}/balance`, headers: admin.auth, payload: { delta: 5, reason: 'goodwill' } })).statusCode, 200);
    const sessions = (await app.inject({ method: 'GET', url: '/api/auth/sessions', headers: admin.auth })).json().items;
    assert.equal(sessions.find((session: { current: boolean }) => session.current).mfa_verified_at, verified.json().verified_at);
  });

  it('asks for step-up before a factor is added to a user who has one, and only the first factor verifies the session', async () => {
    const { app, db } = fixture;
    const owner = await createUser(app);
    const { device } = await enrolTotp(app, owner);
    // A session of the owner's that the attacker holds, its second factor verified long ago.
    const stolen = await loginWithTotp(app, owner.email, owner.password, device);
    const pending = await app.inject({ method: 'POST', url: '/api/auth/mfa/totp', headers: stolen.auth, payload: { name: 'Started while fresh' } });
    assert.equal(pending.statusCode, 201, pending.body);
    await sql`update sessions set mfa_verified_at = now() - interval '1000 seconds' where user_id = ${owner.id}`.execute(db);
    const adding = [
      { method: 'POST', url: '/api/auth/mfa/totp', payload: { name: 'Attacker' } },
      { method: 'POST', url: `/api/auth/mfa/totp/${pending.json().id}/confirm`, payload: { code: '123456' } },
      { method: 'POST', url: '/api/auth/mfa/webauthn/registration-options' },
      { method: 'POST', url: '/api/auth/mfa/webauthn', payload: { response: {} } },
    ] as const;
    for (const request of adding) {
      const refused = await app.inject({ ...request, headers: stolen.auth });
      assert.equal(refused.statusCode, 403, `${request.method} ${request.url}: ${refused.body}`);
      assert.equal(problemOf(refused).code, 'step_up_required', `${request.method} ${request.url}`);
    }
    const factors = await db.selectFrom('mfa_factors').select(['id', 'confirmed_at']).where('user_id', '=', owner.id).execute();
    assert.deepEqual(factors.map((factor) => factor.confirmed_at !== null).sort(), [false, true], 'nothing added, nothing confirmed');
    assert.equal(problemOf(await app.inject({ method: 'POST', url: '/api/auth/mfa/recovery-codes', headers: stolen.auth })).code, 'step_up_required', 'still not stepped up');

    // Stepped up, a later factor is added, and leaves the session's verification as it was.
    assert.equal((await app.inject({ method: 'POST', url: '/api/auth/mfa/verify', headers: stolen.auth, payload: { code: device.next() } })).statusCode, 200);
    await sql`update sessions set mfa_verified_at = now() - interval '600 seconds' where user_id = ${owner.id}`.execute(db);
    const verifiedBefore = (await db.selectFrom('sessions').select('mfa_verified_at').where('user_id', '=', owner.id).orderBy('created_at', 'desc').executeTakeFirstOrThrow()).mfa_verified_at;
    const second = await enrolTotp(app, { ...owner, auth: stolen.auth }, 'Second phone');
    assert.equal(second.factor.recovery_codes, undefined, 'recovery codes come with the first factor only');
    const verifiedAfter = (await db.selectFrom('sessions').select('mfa_verified_at').where('user_id', '=', owner.id).orderBy('created_at', 'desc').executeTakeFirstOrThrow()).mfa_verified_at;
    assert.deepEqual(verifiedAfter, verifiedBefore, 'a later factor is no step-up');
    await sql`update sessions set mfa_verified_at = now() - interval '1000 seconds' where user_id = ${owner.id}`.execute(db);
    assert.equal(problemOf(await app.inject({ method: 'POST', url: '/api/auth/mfa/recovery-codes', headers: stolen.auth })).code, 'step_up_required');

    // A user without a factor enrols without step-up, and the first factor verifies the session.
    const newcomer = await createUser(app);
    await enrolTotp(app, newcomer);
    const session = await db.selectFrom('sessions').select('mfa_verified_at').where('user_id', '=', newcomer.id).executeTakeFirstOrThrow();
    assert.ok(session.mfa_verified_at, 'the first factor counts as verified');
    assert.equal((await app.inject({ method: 'POST', url: '/api/auth/mfa/recovery-codes', headers: newcomer.auth })).statusCode, 200);
  });

  it('verifies the current session only, and answers the refusals in their order', async () => {
    const { app } = fixture;
    const admin = await createUser(app, { role: 'admin' });
    const { device } = await enrolTotp(app, admin);
    const other = await loginWithTotp(app, admin.email, admin.password, device);
    await ageVerification(admin, 1_000);
    assert.equal((await app.inject({ method: 'POST', url: '/api/auth/mfa/verify', headers: admin.auth, payload: { code: device.next() } })).statusCode, 200);
    const fromOther = await app.inject({ method: 'POST', url: '/api/signing-keys/rotate', headers: other.auth });
    assert.equal(problemOf(fromOther).code, 'step_up_required', 'the other session was not verified');

    // forbidden before step_up_required; step_up_required before 404 and 400.
    const manager = await createUser(app, { role: 'manager' });
    await enrolTotp(app, manager);
    await ageVerification(manager, 1_000);
    assert.equal(problemOf(await app.inject({ method: 'PUT', url: `/api/users/${admin.id}/balance`, headers: manager.auth, payload: { delta: 1, reason: 'x' } })).code, 'forbidden');
    assert.equal(problemOf(await app.inject({ method: 'DELETE', url: `/api/users/${randomUUID()}`, headers: other.auth })).code, 'step_up_required');
    assert.equal(problemOf(await app.inject({ method: 'PUT', url: `/api/users/${admin.id}/balance`, headers: other.auth, payload: { delta: 'x' } })).code, 'step_up_required');
    assert.equal(problemOf(await app.inject({ method: 'DELETE', url: `/api/users/${randomUUID()}`, headers: bearer('nope') })).code, 'invalid_token', '401 first');
  });

  it('lets an API client do what its scope opens: it has no second factor to step up', async () => {
    const { app } = fixture;
    const admin = await loginAdmin(app);
    const created = await app.inject({ method: 'POST', url: '/api/clients', headers: admin.auth, payload: { name: 'Loyalty', scopes: ['balance:write'] } });
    const customer = await createUser(app);
    const changed = await app.inject({ method: 'PUT', url: `/api/users/${customer.id}/balance`, headers: bearer(created.json().secret), payload: { delta: 3, reason: 'points' } });
    assert.equal(changed.statusCode, 200, changed.body);
  });

  it("resets another user's factors: every factor and code gone, every session ended, the user told", async () => {
    const { app, db } = fixture;
    const admin = await loginAdmin(app);
    const user = await createUser(app);
    const { device } = await enrolTotp(app, user);
    const second = await loginWithTotp(app, user.email, user.password, device);
    const reset = await app.inject({ method: 'DELETE', url: `/api/users/${user.id}/mfa`, headers: admin.auth });
    assert.equal(reset.statusCode, 204, reset.body);
    for (const session of [user.auth, second.auth]) assert.equal((await app.inject({ method: 'GET', url: '/api/users/profile', headers: session })).statusCode, 401);
    assert.equal((await db.selectFrom('mfa_factors').select('id').where('user_id', '=', user.id).execute()).length, 0);
    assert.equal((await db.selectFrom('mfa_recovery_codes').select('id').where('user_id', '=', user.id).execute()).length, 0);
    assert.equal((await app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: user.email, password: user.password } })).statusCode, 200, 'one step again');
    const event = await db.selectFrom('events').selectAll().where('subject_id', '=', user.id).where('type', '=', 'user.mfa_reset').executeTakeFirstOrThrow();
    assert.equal(event.actor_id, admin.id);
    const mails = await db.selectFrom('email_outbox').select('subject').where('to_address', '=', user.email).execute();
    assert.ok(mails.some((mail) => mail.subject === 'The second factors of your account were reset'));

    const plain = await createUser(app);
    assert.equal((await app.inject({ method: 'DELETE', url: `/api/users/${plain.id}/mfa`, headers: admin.auth })).statusCode, 204);
    assert.ok((await db.selectFrom('email_outbox').select('subject').where('to_address', '=', plain.email).execute()).some((mail) => mail.subject === 'The second factors of your account were reset'), 'told also without a factor');
    assert.equal(problemOf(await app.inject({ method: 'DELETE', url: `/api/users/${admin.id}/mfa`, headers: admin.auth })).code, 'forbidden', 'not their own');
    assert.equal((await app.inject({ method: 'DELETE', url: `/api/users/${randomUUID()}/mfa`, headers: admin.auth })).statusCode, 404);
    const manager = await createUser(app, { role: 'manager' });
    assert.equal(problemOf(await app.inject({ method: 'DELETE', url: `/api/users/${plain.id}/mfa`, headers: manager.auth })).code, 'forbidden');
  });
});

/** MFA_REQUIRED_ROLES: staff without a factor may only enrol. */
describe('second factors required by role', () => {
  let testApp: TestApp;
  before(async () => {
    testApp = await buildTestApp({ environment: { MFA_REQUIRED_ROLES: 'admin, manager' } });
  });
  after(() => testApp.close());

  it('lets a manager without a factor log in and enrol, and nothing else until then', async () => {
    const { app } = testApp;
    const admin = await loginAdmin(app);
    assert.equal(problemOf(await app.inject({ method: 'GET', url: '/api/users', headers: admin.auth })).code, 'mfa_enrollment_required');
    // The first admin enrols to create the manager.
    await enrolTotp(app, admin);
    const customer = await createUser(app, { admin });
    assert.equal((await app.inject({ method: 'GET', url: '/api/variants', headers: customer.auth })).statusCode, 200, 'a role not required is not asked');
    const manager = await createUser(app, { role: 'manager', admin });
    const open = [
      ['GET', '/api/users/profile'],
      ['GET', '/api/auth/mfa'],
      ['GET', '/api/auth/sessions'],
    ] as const;
    for (const [method, url] of open) assert.equal((await app.inject({ method, url, headers: manager.auth })).statusCode, 200, url);
    assert.equal((await app.inject({ method: 'GET', url: '/api/auth/mfa', headers: manager.auth })).json().required, true);
    const refused = [
      ['GET', '/api/users'],
      ['GET', '/api/variants'],
      ['PATCH', '/api/users/profile'],
      ['GET', '/api/webhooks'],
    ] as const;
    for (const [method, url] of refused) {
      const reply = await app.inject({ method, url, headers: manager.auth, ...(method === 'PATCH' ? { payload: { name: 'x' } } : {}) });
      assert.equal(problemOf(reply).code, 'mfa_enrollment_required', `${method} ${url}`);
    }
    assert.equal((await app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: manager.refreshToken } })).statusCode, 200, 'refresh stays open');
    const { factor } = await enrolTotp(app, manager);
    const fresh = await loginWithTotp(app, manager.email, manager.password, (await enrolTotp(app, manager, 'Second phone')).device);
    assert.equal((await app.inject({ method: 'GET', url: '/api/users', headers: fresh.auth })).statusCode, 200, 'enrolled: open again');
    // Two factors: one may go; the last one stays.
    const factors = (await app.inject({ method: 'GET', url: '/api/auth/mfa', headers: fresh.auth })).json().factors as { id: string }[];
    assert.equal((await app.inject({ method: 'DELETE', url: `/api/auth/mfa/factors/${factor.id}`, headers: fresh.auth })).statusCode, 204);
    const last = factors.find((listed) => listed.id !== factor.id)!;
    const kept = await app.inject({ method: 'DELETE', url: `/api/auth/mfa/factors/${last.id}`, headers: fresh.auth });
    assert.equal(kept.statusCode, 409);
    assert.equal(problemOf(kept).code, 'last_factor');
  });
});
