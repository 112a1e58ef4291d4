import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Secret, TOTP } from 'otpauth';
import { decodeJwt } from '../helpers/jwt.js';
import { createUser, problemOf, useAppWithAdmin } from '../helpers/test-app.js';
import { TotpDevice } from '../helpers/totp-device.js';
import { bearer, enrolTotp, firstStep, loginWithTotp } from './mfa-helpers.js';

/** API.md section 12: authenticator apps (TOTP), the two-step login, recovery codes. */
describe('second factors: TOTP and recovery codes', () => {
  const fixture = useAppWithAdmin();

  it('enrols an authenticator app: a secret shown once, counted only once a code of it confirms it', async () => {
    const { app, db } = fixture;
    const user = await createUser(app);
    const before = await app.inject({ method: 'GET', url: '/api/auth/mfa', headers: user.auth });
    assert.deepEqual(before.json(), { enabled: false, required: false, factors: [], recovery_codes_left: 0 });
    const started = await app.inject({ method: 'POST', url: '/api/auth/mfa/totp', headers: user.auth, payload: { name: ' Phone ' } });
    assert.equal(started.statusCode, 201);
    assert.equal(started.headers['cache-control'], 'no-store');
    const body = started.json();
    assert.equal(started.headers.location, `/api/auth/mfa/factors/${body.id}`);
    const located = await app.inject({ method: 'GET', url: started.headers.location, headers: user.auth });
    assert.deepEqual(Object.keys(located.json()).sort(), ['created_at', 'id', 'last_used_at', 'name', 'type'], 'never the secret');
    assert.equal(body.type, 'totp');
    assert.equal(body.name, 'Phone');
    assert.match(body.secret, /^[A-Z2-7]{32}$/, 'base32 of 20 bytes');
    const url = new URL(body.otpauth_url);
    assert.equal(url.protocol, 'otpauth:');
    assert.equal(url.searchParams.get('secret'), body.secret);
    assert.equal(url.searchParams.get('algorithm'), 'SHA1');
    assert.equal(url.searchParams.get('digits'), '6');
    assert.equal(url.searchParams.get('period'), '30');
    assert.ok(decodeURIComponent(url.pathname).includes(user.email));
    const stored = await db.selectFrom('mfa_factors').selectAll().where('id', '=', body.id).executeTakeFirstOrThrow();
    assert.equal(stored.totp_secret, `plain:${body.secret}`, 'without SIGNING_KEY_ENCRYPTION_KEY kept as it is (sealed with it: passkeys.test.ts)');
    assert.equal(stored.confirmed_at, null);
    assert.deepEqual((await app.inject({ method: 'GET', url: '/api/auth/mfa', headers: user.auth })).json().factors, [], 'unconfirmed factors are not listed');
    // Logins are not asked for it yet.
    assert.equal((await app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: user.email, password: user.password } })).statusCode, 200);

    const device = new TotpDevice(body.secret);
    const wrong = await app.inject({ method: 'POST', url: `/api/auth/mfa/totp/${body.id}/confirm`, headers: user.auth, payload: { code: device.wrong() } });
    assert.equal(problemOf(wrong).code, 'invalid_mfa_code');
    const confirmed = await app.inject({ method: 'POST', url: `/api/auth/mfa/totp/${body.id}/confirm`, headers: user.auth, payload: { code: device.next() } });
    assert.equal(confirmed.statusCode, 200, confirmed.body);
    assert.equal(confirmed.headers['cache-control'], 'no-store');
    const factor = confirmed.json();
    assert.equal(factor.id, body.id);
    assert.equal(factor.recovery_codes.length, 10, "the user's first factor brings 10 recovery codes");
    assert.equal(new Set(factor.recovery_codes).size, 10);
    assert.ok(factor.recovery_codes.every((code: string) => /^[0-9a-z]{4}(-[0-9a-z]{4}){3}$/.test(code)));
    const hashes = await db.selectFrom('mfa_recovery_codes').select('code_hash').where('user_id', '=', user.id).execute();
    assert.equal(hashes.length, 10);
    assert.ok(!JSON.stringify(hashes).includes(factor.recovery_codes[0].replace(/-/g, '')), 'kept only as hashes');
    // The confirmed factor is not confirmed again, and another user's id is 404 alike.
    assert.equal((await app.inject({ method: 'POST', url: `/api/auth/mfa/totp/${body.id}/confirm`, headers: user.auth, payload: { code: device.wrong() } })).statusCode, 404);
    const other = await createUser(app);
    assert.equal((await app.inject({ method: 'POST', url: `/api/auth/mfa/totp/${body.id}/confirm`, headers: other.auth, payload: { code: '123456' } })).statusCode, 404);

    const status = (await app.inject({ method: 'GET', url: '/api/auth/mfa', headers: user.auth })).json();
    assert.equal(status.enabled, true);
    assert.equal(status.recovery_codes_left, 10);
    assert.deepEqual(status.factors.map((listed: { id: string; type: string; name: string }) => [listed.id, listed.type, listed.name]), [[body.id, 'totp', 'Phone']]);
    assert.ok(status.factors[0].last_used_at, 'the confirming code was a use');
    // Confirming verified the session's second factor.
    const sessions = (await app.inject({ method: 'GET', url: '/api/auth/sessions', headers: user.auth })).json().items;
    assert.ok(sessions.find((session: { current: boolean }) => session.current).mfa_verified_at);

    const events = await db.selectFrom('events').select(['type', 'data']).where('subject_id', '=', user.id).orderBy('created_at').execute();
    assert.deepEqual(events.map((event) => event.type).filter((type) => type.includes('mfa') || type.includes('recovery')), ['user.mfa_factor_added', 'user.recovery_codes_generated']);
    assert.ok(!JSON.stringify(events).includes(body.secret) && !JSON.stringify(events).includes(factor.recovery_codes[0]), 'never a secret or a code');
    const mails = await db.selectFrom('email_outbox').select(['to_address', 'subject']).where('to_address', '=', user.email).execute();
    assert.ok(mails.some((mail) => mail.subject === 'A second factor was added to your account'));
  });

  it('logs in in two steps: no session before the second factor, amr and auth_time kept across refreshes', async () => {
    const { app, db } = fixture;
    const user = await createUser(app);
    const { device } = await enrolTotp(app, user);
    const sessionsBefore = await db.selectFrom('sessions').select('id').where('user_id', '=', user.id).execute();

    const { reply, mfaToken, methods } = await firstStep(app, user.email, user.password);
    assert.equal(problemOf(reply).code, 'mfa_required');
    assert.equal(reply.headers['cache-control'], 'no-store');
    assert.match(mfaToken, /^[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(methods, ['totp', 'recovery_code']);
    assert.equal((await db.selectFrom('sessions').select('id').where('user_id', '=', user.id).execute()).length, sessionsBefore.length, 'nothing of a session yet');
    // A wrong password is still the plain 401.
    assert.equal(problemOf(await app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: user.email, password: 'wrong-password' } })).code, 'invalid_credentials');

    // The code that confirmed the factor was spent: a replay in its window is refused.
    const replay = await app.inject({ method: 'POST', url: '/api/auth/login/mfa', payload: { mfa_token: mfaToken, code: device.last() } });
    assert.equal(problemOf(replay).code, 'invalid_mfa_code');
    const started = Math.floor(Date.now() / 1000);
    const second = await app.inject({ method: 'POST', url: '/api/auth/login/mfa', payload: { mfa_token: mfaToken, code: device.next() } });
    assert.equal(second.statusCode, 200, second.body);
    assert.equal(second.headers['cache-control'], 'no-store');
    const claims = decodeJwt(second.json().access_token).payload;
    assert.deepEqual(claims.amr, ['pwd', 'otp', 'mfa']);
    assert.ok(Math.abs((claims.auth_time as number) - started) <= 2);
    // The token is spent: whatever code comes with it (this device has at most three codes a step to give).
    assert.equal(problemOf(await app.inject({ method: 'POST', url: '/api/auth/login/mfa', payload: { mfa_token: mfaToken, code: device.last() } })).code, 'invalid_mfa_token');
    const current = (await app.inject({ method: 'GET', url: '/api/auth/sessions', headers: bearer(second.json().access_token) })).json().items.find((session: { current: boolean }) => session.current);
    assert.ok(current.mfa_verified_at);

    const refreshed = await app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: second.json().refresh_token } });
    assert.equal(refreshed.statusCode, 200);
    const after = decodeJwt(refreshed.json().access_token).payload;
    assert.deepEqual(after.amr, ['pwd', 'otp', 'mfa']);
    assert.equal(after.auth_time, claims.auth_time);

    // A user without a factor: amr pwd.
    const plain = await createUser(app);
    assert.deepEqual(decodeJwt(plain.accessToken).payload.amr, ['pwd']);
  });

  it('keeps at most 20 factors a user, unconfirmed ones included: the 21st is 409 too_many_factors, and passkey options too', async () => {
    const { app } = fixture;
    const user = await createUser(app);
    for (let started = 0; started < 20; started += 1) {
      assert.equal((await app.inject({ method: 'POST', url: '/api/auth/mfa/totp', headers: user.auth, payload: {} })).statusCode, 201);
    }
    const refused = await app.inject({ method: 'POST', url: '/api/auth/mfa/totp', headers: user.auth, payload: {} });
    assert.equal(refused.statusCode, 409);
    assert.equal(problemOf(refused).code, 'too_many_factors');
    const options = await app.inject({ method: 'POST', url: '/api/auth/mfa/webauthn/registration-options', headers: user.auth });
    assert.equal(problemOf(options).code, 'too_many_factors');
  });

  it('accepts a code of one step either side, each step once, and nothing older than the last one used', async () => {
    const { app } = fixture;
    const user = await createUser(app);
    const { started } = await enrolTotp(app, user);
    const secret = Secret.fromBase32(started.secret);
    const codeAt = (offsetSteps: number) => TOTP.generate({ secret, timestamp: Date.now() + offsetSteps * 30_000 });
    const attempt = async (code: string) => {
      const { mfaToken } = await firstStep(app, user.email, user.password);
      return app.inject({ method: 'POST', url: '/api/auth/login/mfa', payload: { mfa_token: mfaToken, code } });
    };
    assert.equal(problemOf(await attempt(codeAt(-3))).code, 'invalid_mfa_code', 'three steps back');
    assert.equal(problemOf(await attempt(codeAt(3))).code, 'invalid_mfa_code', 'three steps ahead');
    assert.equal((await attempt(`${codeAt(1).slice(0, 3)} ${codeAt(1).slice(3)}`)).statusCode, 200, 'the next step, typed with a space');
    assert.equal(problemOf(await attempt(codeAt(0))).code, 'invalid_mfa_code', 'the current step is older than the one used');
  });

  it('kills an mfa_token at the 5th wrong code, and counts wrong codes toward the account limit', async () => {
    const { app, db } = fixture;
    const user = await createUser(app);
    const { device } = await enrolTotp(app, user);
    const { mfaToken } = await firstStep(app, user.email, user.password);
    for (let attempt = 1; attempt <= 5; attempt++) {
      const wrong = await app.inject({ method: 'POST', url: '/api/auth/login/mfa', payload: { mfa_token: mfaToken, code: device.wrong() } });
      assert.equal(problemOf(wrong).code, 'invalid_mfa_code', `attempt ${attempt}`);
    }
    const dead = await app.inject({ method: 'POST', url: '/api/auth/login/mfa', payload: { mfa_token: mfaToken, code: device.next() } });
    assert.equal(dead.statusCode, 401);
    assert.equal(problemOf(dead).code, 'invalid_mfa_token');
    const failures = await db.selectFrom('account_attempts').select('id').where('kind', '=', 'login_failure').where('subject', '=', user.email.toLowerCase()).execute();
    assert.equal(failures.length, 5, 'each wrong code is a failed login of the account');
    for (const token of ['nope', 'A'.repeat(43)]) {
      assert.equal(problemOf(await app.inject({ method: 'POST', url: '/api/auth/login/mfa', payload: { mfa_token: token, code: '123456' } })).code, 'invalid_mfa_token');
    }
    assert.equal((await app.inject({ method: 'POST', url: '/api/auth/login/mfa', payload: { mfa_token: mfaToken } })).statusCode, 400, 'a proof is required');
    assert.equal((await app.inject({ method: 'POST', url: '/api/auth/login/mfa', payload: { mfa_token: mfaToken, code: '1', recovery_code: 'x' } })).statusCode, 400, 'one proof only');
  });

  it('logs in with a recovery code once, tells the user, and makes a new set on request (step-up)', async () => {
    const { app, db } = fixture;
    const user = await createUser(app);
    const { factor } = await enrolTotp(app, user);
    const [code, other] = factor.recovery_codes!;
    const { mfaToken } = await firstStep(app, user.email, user.password);
    const second = await app.inject({ method: 'POST', url: '/api/auth/login/mfa', payload: { mfa_token: mfaToken, recovery_code: code!.toUpperCase().replace(/-/g, ' ') } });
    assert.equal(second.statusCode, 200, 'any case, spaces for dashes');
    assert.deepEqual(decodeJwt(second.json().access_token).payload.amr, ['pwd', 'mfa']);
    const again = await firstStep(app, user.email, user.password);
    assert.equal(problemOf(await app.inject({ method: 'POST', url: '/api/auth/login/mfa', payload: { mfa_token: again.mfaToken, recovery_code: code } })).code, 'invalid_mfa_code', 'each code once');
    assert.equal((await app.inject({ method: 'GET', url: '/api/auth/mfa', headers: user.auth })).json().recovery_codes_left, 9);
    const used = await db.selectFrom('events').select('data').where('subject_id', '=', user.id).where('type', '=', 'user.recovery_code_used').executeTakeFirstOrThrow();
    assert.deepEqual(used.data, { recovery_codes_left: 9 });
    const mails = await db.selectFrom('email_outbox').select('subject').where('to_address', '=', user.email).execute();
    assert.ok(mails.some((mail) => mail.subject === 'A recovery code of your account was used'));

    const fresh = await app.inject({ method: 'POST', url: '/api/auth/mfa/recovery-codes', headers: user.auth });
    assert.equal(fresh.statusCode, 200, fresh.body);
    assert.equal(fresh.headers['cache-control'], 'no-store');
    assert.equal(fresh.json().recovery_codes.length, 10);
    const third = await firstStep(app, user.email, user.password);
    assert.equal(problemOf(await app.inject({ method: 'POST', url: '/api/auth/login/mfa', payload: { mfa_token: third.mfaToken, recovery_code: other } })).code, 'invalid_mfa_code', 'the old set is void');
    assert.equal((await app.inject({ method: 'POST', url: '/api/auth/login/mfa', payload: { mfa_token: third.mfaToken, recovery_code: fresh.json().recovery_codes[0] } })).statusCode, 200);
    const plain = await createUser(app);
    assert.equal((await app.inject({ method: 'POST', url: '/api/auth/mfa/recovery-codes', headers: plain.auth })).statusCode, 404, 'no factor, no recovery codes');
  });

  it('removes a factor: the other sessions end, the one removing stays; the last one takes the recovery codes along', async () => {
    const { app, db } = fixture;
    const user = await createUser(app);
    const { device, factor } = await enrolTotp(app, user);
    const elsewhere = await loginWithTotp(app, user.email, user.password, device);
    const removed = await app.inject({ method: 'DELETE', url: `/api/auth/mfa/factors/${factor.id}`, headers: user.auth });
    assert.equal(removed.statusCode, 204, removed.body);
    assert.equal((await app.inject({ method: 'GET', url: '/api/auth/mfa', headers: user.auth })).statusCode, 200, 'the session that removed it stays');
    assert.equal((await app.inject({ method: 'GET', url: '/api/auth/mfa', headers: elsewhere.auth })).statusCode, 401, 'the other session ended');
    assert.equal((await db.selectFrom('mfa_recovery_codes').select('id').where('user_id', '=', user.id).execute()).length, 0);
    assert.deepEqual((await app.inject({ method: 'GET', url: '/api/auth/mfa', headers: user.auth })).json(), { enabled: false, required: false, factors: [], recovery_codes_left: 0 });
    assert.equal((await app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: user.email, password: user.password } })).statusCode, 200, 'logins are one step again');
    const event = await db.selectFrom('events').select('data').where('subject_id', '=', user.id).where('type', '=', 'user.mfa_factor_removed').executeTakeFirstOrThrow();
    assert.equal((event.data as { factor_id: string }).factor_id, factor.id);
    assert.ok((await db.selectFrom('email_outbox').select('subject').where('to_address', '=', user.email).execute()).some((mail) => mail.subject === 'A second factor was removed from your account'));
    assert.equal((await app.inject({ method: 'DELETE', url: `/api/auth/mfa/factors/${factor.id}`, headers: user.auth })).statusCode, 404);
  });
});
