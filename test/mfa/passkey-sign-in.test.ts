import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { decodeJwt } from '../helpers/jwt.js';
import { SoftwareAuthenticator, type RequestOptions } from '../helpers/software-authenticator.js';
import { buildTestApp, createUser, onPostgres, problemOf, useAppWithAdmin, type Session, type TestApp } from '../helpers/test-app.js';
import { bearer, enrolTotp, firstStep, registerPasskey } from './mfa-helpers.js';

const PUBLIC_URL = 'https://shop.example.com';
const RP_ID = 'shop.example.com';

type Assertion = ReturnType<SoftwareAuthenticator['assert']>;

/** POST /api/auth/passkey/options: its 200 body. */
async function signInOptions(app: FastifyInstance, remoteAddress?: string): Promise<RequestOptions & Record<string, unknown>> {
  const reply = await app.inject({ method: 'POST', url: '/api/auth/passkey/options', ...(remoteAddress ? { remoteAddress } : {}) });
  assert.equal(reply.statusCode, 200, reply.body);
  return reply.json();
}

const signIn = (app: FastifyInstance, response: unknown, remoteAddress?: string) =>
  app.inject({ method: 'POST', url: '/api/auth/login/passkey', payload: { response }, ...(remoteAddress ? { remoteAddress } : {}) });

/** A user with a passkey of its own authenticator (registered under section 12, in the user's password session). */
async function userWithPasskey(app: FastifyInstance): Promise<{ user: Session; authenticator: SoftwareAuthenticator; recoveryCodes: string[] }> {
  const user = await createUser(app);
  const authenticator = new SoftwareAuthenticator(PUBLIC_URL, RP_ID);
  const registered = await registerPasskey(app, user, authenticator);
  assert.equal(registered.statusCode, 201, registered.body);
  return { user, authenticator, recoveryCodes: registered.json().recovery_codes };
}

/** A sign-in's session as GET /api/auth/sessions shows it to its own token. */
async function currentSession(app: FastifyInstance, accessToken: string) {
  const reply = await app.inject({ method: 'GET', url: '/api/auth/sessions', headers: bearer(accessToken) });
  assert.equal(reply.statusCode, 200, reply.body);
  return reply.json().items.find((session: { current: boolean }) => session.current) as { id: string; mfa_verified_at: string | null };
}

const newRecoveryCodes = (app: FastifyInstance, accessToken: string) => app.inject({ method: 'POST', url: '/api/auth/mfa/recovery-codes', headers: bearer(accessToken) });

/** API.md section 19: passkeys as the first factor, through a software authenticator that really signs. */
describe('sign-in by passkey', () => {
  const fixture = useAppWithAdmin({ environment: { PUBLIC_URL } });

  it('registers discoverable passkeys: residentKey preferred, the user handle being the user id', async () => {
    const { app } = fixture;
    const user = await createUser(app);
    const creation = (await app.inject({ method: 'POST', url: '/api/auth/mfa/webauthn/registration-options', headers: user.auth })).json();
    assert.equal(creation.authenticatorSelection.residentKey, 'preferred');
    assert.equal(creation.authenticatorSelection.requireResidentKey, false);
    assert.equal(Buffer.from(creation.user.id, 'base64url').toString('hex'), user.id.replace(/-/g, ''), 'the handle is the id, no personal data');
  });

  it('gives options with no allowCredentials and a challenge stored 5 minutes for nobody, without a body or a token', async () => {
    const { app, db } = fixture;
    const reply = await app.inject({ method: 'POST', url: '/api/auth/passkey/options' });
    assert.equal(reply.statusCode, 200, reply.body);
    const options = reply.json();
    assert.equal(options.allowCredentials, undefined);
    assert.equal(options.rpId, RP_ID);
    assert.equal(options.userVerification, 'preferred');
    assert.equal(options.timeout, 300_000);
    const stored = await db.selectFrom('webauthn_challenges').selectAll().where('challenge', '=', options.challenge).executeTakeFirstOrThrow();
    assert.equal(stored.purpose, 'sign_in');
    assert.equal(stored.user_id, null);
    assert.equal(stored.login_token_id, null);
    assert.equal(stored.session_id, null);
    const lifetime = (stored.expires_at.getTime() - Date.now()) / 1000;
    assert.ok(lifetime > 290 && lifetime <= 300, `valid 5 minutes, not ${lifetime} s`);
    // A bodiless operation (API.md section 10): `{}` is no body; anything else is a 400.
    assert.equal((await app.inject({ method: 'POST', url: '/api/auth/passkey/options', payload: {} })).statusCode, 200);
    assert.equal(problemOf(await app.inject({ method: 'POST', url: '/api/auth/passkey/options', payload: { email: 'a@example.com' } })).code, 'validation_failed');
    // Another challenge each time.
    assert.notEqual((await signInOptions(app)).challenge, options.challenge);
  });

  it('signs in with a user-verified passkey: two factors, no second step, the challenge good once; the session is like any other', async () => {
    const { app, db } = fixture;
    const { user, authenticator } = await userWithPasskey(app);
    await enrolTotp(app, user);
    const options = await signInOptions(app);
    const assertion = authenticator.assert(options);
    const started = Math.floor(Date.now() / 1000);
    const reply = await signIn(app, assertion);
    assert.equal(reply.statusCode, 200, reply.body);
    assert.equal(reply.headers['cache-control'], 'no-store');
    const tokens = reply.json();
    assert.equal(tokens.token_type, 'Bearer');
    const claims = decodeJwt(tokens.access_token).payload;
    assert.equal(claims.sub, user.id);
    assert.deepEqual(claims.amr, ['hwk', 'mfa']);
    assert.ok(Math.abs((claims.auth_time as number) - started) <= 2);
    const stored = await db.selectFrom('sessions').selectAll().where('id', '=', claims.sid as string).executeTakeFirstOrThrow();
    assert.deepEqual(stored.amr, ['hwk', 'mfa']);
    assert.ok(stored.mfa_verified_at, 'mfa_verified_at set');
    const passkey = await db.selectFrom('mfa_factors').selectAll().where('credential_id', '=', assertion.id).executeTakeFirstOrThrow();
    assert.equal(Number(passkey.sign_count), 1, 'the signature counter is kept');
    assert.ok(passkey.last_used_at);
    assert.equal((await db.selectFrom('webauthn_challenges').select('challenge').where('challenge', '=', options.challenge).execute()).length, 0, 'the challenge is spent');

    // The same challenge again, even with a fresh signature: 400.
    assert.equal(problemOf(await signIn(app, authenticator.assert(options))).code, 'invalid_mfa_code');
    assert.equal(problemOf(await signIn(app, assertion)).code, 'invalid_mfa_code', 'the very same assertion replayed');

    // Listed in /api/auth/sessions with its verified second factor; a step-up action needs no verify.
    const listed = await currentSession(app, tokens.access_token);
    assert.equal(listed.id, claims.sid);
    assert.ok(listed.mfa_verified_at);
    const other = (await app.inject({ method: 'GET', url: '/api/auth/sessions', headers: user.auth })).json().items.map((session: { id: string }) => session.id);
    assert.ok(other.includes(claims.sid), "the user's other sessions see it too");
    assert.equal((await newRecoveryCodes(app, tokens.access_token)).statusCode, 200, 'two factors count for step-up');
    // amr and auth_time kept across a refresh; logout ends it like any other.
    const refreshed = await app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: tokens.refresh_token } });
    assert.equal(refreshed.statusCode, 200, refreshed.body);
    assert.deepEqual(decodeJwt(refreshed.json().access_token).payload.amr, ['hwk', 'mfa']);
    assert.equal(decodeJwt(refreshed.json().access_token).payload.auth_time, claims.auth_time);
    assert.equal((await app.inject({ method: 'POST', url: '/api/auth/logout', payload: { refresh_token: refreshed.json().refresh_token } })).statusCode, 204);
    assert.equal(problemOf(await app.inject({ method: 'GET', url: '/api/auth/sessions', headers: bearer(refreshed.json().access_token) })).code, 'invalid_token');
    assert.equal(problemOf(await app.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: refreshed.json().refresh_token } })).code, 'invalid_token');
    const remaining = (await app.inject({ method: 'GET', url: '/api/auth/sessions', headers: user.auth })).json().items.map((session: { id: string }) => session.id);
    assert.ok(!remaining.includes(claims.sid), 'gone from the list');
  });

  it('counts a passkey without user verification as one factor: a session with amr hwk, step-up still to do', async () => {
    const { app, db } = fixture;
    const { user, authenticator } = await userWithPasskey(app);
    const reply = await signIn(app, authenticator.assert(await signInOptions(app), { userVerified: false }));
    assert.equal(reply.statusCode, 200, reply.body);
    const claims = decodeJwt(reply.json().access_token).payload;
    assert.equal(claims.sub, user.id);
    assert.deepEqual(claims.amr, ['hwk']);
    assert.equal((await currentSession(app, reply.json().access_token)).mfa_verified_at, null);
    const stored = await db.selectFrom('sessions').select(['amr', 'mfa_verified_at']).where('id', '=', claims.sid as string).executeTakeFirstOrThrow();
    assert.deepEqual(stored, { amr: ['hwk'], mfa_verified_at: null });
    assert.equal(problemOf(await newRecoveryCodes(app, reply.json().access_token)).code, 'step_up_required');
    // A second passkey of the same user is no "other second factor": still no second step.
    const second = new SoftwareAuthenticator(PUBLIC_URL, RP_ID);
    const added = await registerPasskey(app, user, second);
    assert.equal(added.statusCode, 201, added.body);
    const again = await signIn(app, second.assert(await signInOptions(app), { userVerified: false }));
    assert.equal(again.statusCode, 200, again.body);
    assert.deepEqual(decodeJwt(again.json().access_token).payload.amr, ['hwk']);
  });

  it('asks a user with TOTP for it after a passkey without user verification, as a password login does', async () => {
    const { app, db } = fixture;
    const { user, authenticator, recoveryCodes } = await userWithPasskey(app);
    const { device } = await enrolTotp(app, user);
    const sessionsBefore = (await db.selectFrom('sessions').select('id').where('user_id', '=', user.id).execute()).length;

    const reply = await signIn(app, authenticator.assert(await signInOptions(app), { userVerified: false }));
    const password = (await firstStep(app, user.email, user.password)).reply;
    assert.equal(reply.statusCode, 403, reply.body);
    assert.equal(reply.headers['cache-control'], 'no-store');
    const body = problemOf(reply) as ReturnType<typeof problemOf> & { mfa_token: string; methods: string[] };
    const passwordBody = password.json();
    assert.equal(body.code, 'mfa_required');
    assert.deepEqual(Object.keys(body).sort(), Object.keys(passwordBody).sort(), 'the same body as a password login’s');
    for (const field of ['type', 'title', 'status', 'detail', 'code'] as const) assert.equal(body[field], passwordBody[field]);
    assert.match(body.mfa_token, /^[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(passwordBody.methods, ['totp', 'webauthn', 'recovery_code']);
    assert.deepEqual(body.methods, ['totp', 'recovery_code'], 'a passkey does not complete a passkey’s sign-in');
    assert.equal((await db.selectFrom('sessions').select('id').where('user_id', '=', user.id).execute()).length, sessionsBefore, 'nothing of a session yet');

    // A passkey as the second step of a passkey's sign-in is refused, and counted on the token.
    const forToken = (await app.inject({ method: 'POST', url: '/api/auth/mfa/webauthn/authentication-options', payload: { mfa_token: body.mfa_token } })).json();
    const passkeyAgain = await app.inject({ method: 'POST', url: '/api/auth/login/mfa', payload: { mfa_token: body.mfa_token, webauthn: authenticator.assert(forToken) } });
    assert.equal(problemOf(passkeyAgain).code, 'invalid_mfa_code');
    const token = await db.selectFrom('mfa_login_tokens').select(['failures', 'first_factor']).where('user_id', '=', user.id).where('used_at', 'is', null).where('first_factor', '=', 'hwk').executeTakeFirstOrThrow();
    assert.deepEqual(token, { failures: 1, first_factor: 'hwk' });

    // The TOTP step adds its values to the passkey's.
    const second = await app.inject({ method: 'POST', url: '/api/auth/login/mfa', payload: { mfa_token: body.mfa_token, code: device.next() } });
    assert.equal(second.statusCode, 200, second.body);
    const claims = decodeJwt(second.json().access_token).payload;
    assert.deepEqual(claims.amr, ['hwk', 'otp', 'mfa']);
    assert.ok((await currentSession(app, second.json().access_token)).mfa_verified_at);

    // A recovery code completes it too: hwk and mfa.
    const byCode = await signIn(app, authenticator.assert(await signInOptions(app), { userVerified: false }));
    const recovered = await app.inject({ method: 'POST', url: '/api/auth/login/mfa', payload: { mfa_token: byCode.json().mfa_token, recovery_code: recoveryCodes[0] } });
    assert.equal(recovered.statusCode, 200, recovered.body);
    assert.deepEqual(decodeJwt(recovered.json().access_token).payload.amr, ['hwk', 'mfa']);

    // With user verification the same user has no second step.
    const verified = await signIn(app, authenticator.assert(await signInOptions(app)));
    assert.equal(verified.statusCode, 200, verified.body);
  });

  it('keeps a passkey a second factor for a password login', async () => {
    const { app } = fixture;
    const { user, authenticator } = await userWithPasskey(app);
    const { mfaToken, methods } = await firstStep(app, user.email, user.password);
    assert.deepEqual(methods, ['webauthn', 'recovery_code']);
    const options = (await app.inject({ method: 'POST', url: '/api/auth/mfa/webauthn/authentication-options', payload: { mfa_token: mfaToken } })).json();
    // A sign-in challenge does not answer for a login's second step, nor the reverse.
    const signInChallenge = await signInOptions(app);
    assert.equal(problemOf(await app.inject({ method: 'POST', url: '/api/auth/login/mfa', payload: { mfa_token: mfaToken, webauthn: authenticator.assert(signInChallenge) } })).code, 'invalid_mfa_code');
    assert.equal(problemOf(await signIn(app, authenticator.assert(options))).code, 'invalid_mfa_code');
    const fresh = (await app.inject({ method: 'POST', url: '/api/auth/mfa/webauthn/authentication-options', payload: { mfa_token: mfaToken } })).json();
    const second = await app.inject({ method: 'POST', url: '/api/auth/login/mfa', payload: { mfa_token: mfaToken, webauthn: authenticator.assert(fresh, { userVerified: false }) } });
    assert.equal(second.statusCode, 200, second.body);
    assert.deepEqual(decodeJwt(second.json().access_token).payload.amr, ['pwd', 'hwk', 'mfa']);
  });

  it("answers a suspended user's right passkey 403 account_suspended, and its wrong one 400", async () => {
    const { app, admin } = fixture;
    const { user, authenticator } = await userWithPasskey(app);
    const suspended = await app.inject({ method: 'PUT', url: `/api/users/${user.id}/status`, headers: admin.auth, payload: { status: 'suspended' } });
    assert.equal(suspended.statusCode, 200, suspended.body);
    assert.equal(problemOf(await signIn(app, authenticator.assert(await signInOptions(app), { tamper: true }))).code, 'invalid_mfa_code', 'a wrong assertion reveals nothing');
    assert.equal(problemOf(await signIn(app, authenticator.assert(await signInOptions(app)))).code, 'account_suspended');
    assert.equal(problemOf(await signIn(app, authenticator.assert(await signInOptions(app), { userVerified: false }))).code, 'account_suspended');
    await app.inject({ method: 'PUT', url: `/api/users/${user.id}/status`, headers: admin.auth, payload: { status: 'active' } });
    assert.equal((await signIn(app, authenticator.assert(await signInOptions(app)))).statusCode, 200);
  });

  it('refuses an unknown or removed passkey 400 invalid_mfa_code, spending the challenge', async () => {
    const { app } = fixture;
    const { user, authenticator } = await userWithPasskey(app);
    // Unknown: a passkey this service never registered.
    const stranger = new SoftwareAuthenticator(PUBLIC_URL, RP_ID);
    stranger.register({ challenge: 'AAAA', rp: { name: 'Shop' }, user: { id: 'AAAA' } });
    const options = await signInOptions(app);
    assert.equal(problemOf(await signIn(app, stranger.assert(options))).code, 'invalid_mfa_code');
    assert.equal(problemOf(await signIn(app, authenticator.assert(options))).code, 'invalid_mfa_code', 'the challenge the unknown passkey named is spent');
    // Removed: the factor deleted (this session verified its second factor when it registered the passkey).
    const factorId = (await app.inject({ method: 'GET', url: '/api/auth/mfa', headers: user.auth })).json().factors[0].id;
    assert.equal((await app.inject({ method: 'DELETE', url: `/api/auth/mfa/factors/${factorId}`, headers: user.auth })).statusCode, 204);
    assert.equal(problemOf(await signIn(app, authenticator.assert(await signInOptions(app)))).code, 'invalid_mfa_code');
  });

  it('refuses an expired or invented challenge, a bad signature, another origin and a counter that did not move', async () => {
    const { app, db } = fixture;
    const { authenticator } = await userWithPasskey(app);
    const expired = await signInOptions(app);
    await db.updateTable('webauthn_challenges').set({ expires_at: new Date(Date.now() - 1000) }).where('challenge', '=', expired.challenge).execute();
    assert.equal(problemOf(await signIn(app, authenticator.assert(expired))).code, 'invalid_mfa_code');
    assert.equal(problemOf(await signIn(app, authenticator.assert({ challenge: Buffer.from('made up by the caller').toString('base64url') }))).code, 'invalid_mfa_code');
    assert.equal(problemOf(await signIn(app, authenticator.assert(await signInOptions(app), { tamper: true }))).code, 'invalid_mfa_code');
    assert.equal(problemOf(await signIn(app, authenticator.assert(await signInOptions(app), { origin: 'https://evil.example' }))).code, 'invalid_mfa_code');
    assert.equal((await signIn(app, authenticator.assert(await signInOptions(app), { counter: 50 }))).statusCode, 200);
    assert.equal(problemOf(await signIn(app, authenticator.assert(await signInOptions(app), { counter: 50 }))).code, 'invalid_mfa_code', 'a cloned key: the counter must move past 50');
    assert.equal(problemOf(await signIn(app, authenticator.assert(await signInOptions(app), { counter: 49 }))).code, 'invalid_mfa_code');
    assert.equal((await signIn(app, authenticator.assert(await signInOptions(app), { counter: 51 }))).statusCode, 200);
    // The user handle must be sent and be the passkey holder's (WebAuthn Level 3, 7.2 step 6).
    const other = await createUser(app);
    const foreignHandle = authenticator.assert(await signInOptions(app));
    foreignHandle.response.userHandle = Buffer.from(other.id.replace(/-/g, ''), 'hex').toString('base64url');
    assert.equal(problemOf(await signIn(app, foreignHandle)).code, 'invalid_mfa_code');
    const noHandle = authenticator.assert(await signInOptions(app));
    const { userHandle: _omitted, ...withoutHandle } = noHandle.response;
    assert.equal(problemOf(await signIn(app, { ...noHandle, response: withoutHandle })).code, 'invalid_mfa_code', 'no user handle: refused');
    const nullHandle = authenticator.assert(await signInOptions(app));
    assert.equal(problemOf(await signIn(app, { ...nullHandle, response: { ...nullHandle.response, userHandle: null } })).code, 'invalid_mfa_code', 'a null user handle: refused');
    assert.equal((await signIn(app, authenticator.assert(await signInOptions(app)))).statusCode, 200, 'the same passkey with its handle signs in');
    // A body that is not an assertion is a schema error.
    assert.equal(problemOf(await signIn(app, { id: 'x' })).code, 'validation_failed');
  });

  it('records what a password login records: no event', async () => {
    const { app, db } = fixture;
    const { user, authenticator } = await userWithPasskey(app);
    const eventsOf = async () => (await db.selectFrom('events').select('id').where('subject_id', '=', user.id).execute()).length;
    const before = await eventsOf();
    assert.equal((await signIn(app, authenticator.assert(await signInOptions(app)))).statusCode, 200);
    assert.equal(await eventsOf(), before);
    const plain = await createUser(app);
    const plainBefore = (await db.selectFrom('events').select('id').where('subject_id', '=', plain.id).execute()).length;
    assert.equal((await app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: plain.email, password: plain.password } })).statusCode, 200);
    assert.equal((await db.selectFrom('events').select('id').where('subject_id', '=', plain.id).execute()).length, plainBefore, 'a password login records none either');
  });
});

describe('sign-in by passkey: limits', () => {
  let testApp: TestApp;
  before(async () => {
    testApp = await buildTestApp({ environment: { PUBLIC_URL, LOGIN_RATE_LIMIT: '4', LOGIN_ACCOUNT_FAILURE_LIMIT: '2' } });
  });
  after(() => testApp.close());

  it('limits options to LOGIN_RATE_LIMIT a minute per address (an IPv6 address by its /64)', async () => {
    const { app, db } = testApp;
    for (let index = 0; index < 4; index++) await signInOptions(app, `2001:db8:1:1::${index + 1}`);
    const stored = (await db.selectFrom('webauthn_challenges').select('challenge').where('purpose', '=', 'sign_in').execute()).length;
    const refused = await app.inject({ method: 'POST', url: '/api/auth/passkey/options', remoteAddress: '2001:db8:1:1::99' });
    assertRateLimited(refused, 60);
    assert.equal((await db.selectFrom('webauthn_challenges').select('challenge').where('purpose', '=', 'sign_in').execute()).length, stored, 'a refused request stores nothing');
    await signInOptions(app, '2001:db8:1:2::1');
  });

  it('counts every sign-in toward LOGIN_RATE_LIMIT per address, wrong ones and unknown passkeys included; a refused one spends no challenge', async () => {
    const { app } = testApp;
    const { authenticator } = await userWithPasskey(app);
    const stranger = new SoftwareAuthenticator(PUBLIC_URL, RP_ID);
    stranger.register({ challenge: 'AAAA', rp: { name: 'Shop' }, user: { id: 'AAAA' } });
    const address = '203.0.113.10';
    assert.equal(problemOf(await signIn(app, stranger.assert(await signInOptions(app, '198.51.100.1')), address)).code, 'invalid_mfa_code');
    assert.equal(problemOf(await signIn(app, stranger.assert(await signInOptions(app, '198.51.100.1')), address)).code, 'invalid_mfa_code');
    assert.equal((await signIn(app, authenticator.assert(await signInOptions(app, '198.51.100.2')), address)).statusCode, 200);
    assert.equal(problemOf(await signIn(app, authenticator.assert(await signInOptions(app, '198.51.100.2'), { tamper: true }), address)).code, 'invalid_mfa_code');
    const right = authenticator.assert(await signInOptions(app, '198.51.100.3'));
    assertRateLimited(await signIn(app, right, address), 60);
    assert.equal((await signIn(app, right, '203.0.113.11')).statusCode, 200, 'another address has its own budget, and the challenge was not spent by the 429');
  });

  it("counts a known passkey's wrong assertions as failed logins of its account: past LOGIN_ACCOUNT_FAILURE_LIMIT the right one is 429 too", async () => {
    const { app, db } = testApp;
    const { user, authenticator } = await userWithPasskey(app);
    const failures = async () => (await db.selectFrom('account_attempts').select('id').where('kind', '=', 'login_failure').where('subject', '=', user.email.toLowerCase()).execute()).length;
    assert.equal((await signIn(app, authenticator.assert(await signInOptions(app, '198.51.100.20')), '192.0.2.1')).statusCode, 200);
    assert.equal(await failures(), 0, 'a right one leaves no failure');
    assert.equal(problemOf(await signIn(app, authenticator.assert(await signInOptions(app, '198.51.100.20'), { tamper: true }), '192.0.2.2')).code, 'invalid_mfa_code');
    assert.equal(problemOf(await signIn(app, authenticator.assert(await signInOptions(app, '198.51.100.20'), { counter: 1 }), '192.0.2.3')).code, 'invalid_mfa_code');
    assert.equal(await failures(), 2);
    assertRateLimited(await signIn(app, authenticator.assert(await signInOptions(app, '198.51.100.21')), '192.0.2.4'), 3600);
    assertRateLimited(await app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: user.email, password: user.password }, remoteAddress: '192.0.2.5' }), 3600);
    assert.equal(await failures(), 2, 'the refused ones are not counted');
  });
});

describe('sign-in by passkey: the second-factor lock', () => {
  let testApp: TestApp;
  before(async () => {
    testApp = await buildTestApp({ environment: { PUBLIC_URL, MFA_FAILURE_LIMIT: '2' } });
  });
  after(() => testApp.close());

  it('counts wrong assertions toward MFA_FAILURE_LIMIT: then the right passkey is 429 and its challenge spent', async () => {
    const { app, db } = testApp;
    const { user, authenticator } = await userWithPasskey(app);
    assert.equal(problemOf(await signIn(app, authenticator.assert(await signInOptions(app), { tamper: true }))).code, 'invalid_mfa_code');
    assert.equal(problemOf(await signIn(app, authenticator.assert(await signInOptions(app), { tamper: true }))).code, 'invalid_mfa_code');
    const options = await signInOptions(app);
    const locked = await signIn(app, authenticator.assert(options));
    assertRateLimited(locked, 900);
    assert.equal((await db.selectFrom('webauthn_challenges').select('challenge').where('challenge', '=', options.challenge).execute()).length, 0);
    // The password step stays open (section 17); its passkey step is locked as well.
    assert.equal(problemOf((await firstStep(app, user.email, user.password)).reply).code, 'mfa_required');
    await db.updateTable('mfa_failure_locks').set({ locked_until: new Date(Date.now() - 1000) }).where('user_id', '=', user.id).execute();
    assert.equal((await signIn(app, authenticator.assert(await signInOptions(app)))).statusCode, 200);
  });
});

describe('sign-in by passkey under concurrency (PostgreSQL, two instances)', { skip: !onPostgres && 'races need PostgreSQL' }, () => {
  let first: TestApp;
  let second: TestApp;
  before(async () => {
    first = await buildTestApp({ environment: { PUBLIC_URL } });
    second = await buildTestApp({ databaseUrl: first.databaseUrl!, environment: { PUBLIC_URL } });
  });
  after(async () => {
    await second?.app.close();
    await first?.close();
  });

  it('accepts one assertion once: of two sign-ins carrying it, exactly one gets a session', async () => {
    const { user, authenticator } = await userWithPasskey(first.app);
    for (let round = 0; round < 5; round++) {
      const assertion = authenticator.assert(await signInOptions(first.app));
      const replies = await Promise.all([signIn(first.app, assertion), signIn(second.app, assertion)]);
      const statuses = replies.map((reply) => reply.statusCode).sort();
      assert.deepEqual(statuses, [200, 400], `round ${round}: ${replies.map((reply) => reply.body).join(' | ')}`);
      assert.equal(problemOf(replies.find((reply) => reply.statusCode === 400)!).code, 'invalid_mfa_code');
    }
    const sessions = await first.db.selectFrom('sessions').select('amr').where('user_id', '=', user.id).execute();
    assert.equal(sessions.filter((session) => session.amr.join(' ') === 'hwk mfa').length, 5, 'one session a round');
  });

  it('accepts one assertion once when the passkey keeps no counter (synced passkeys send 0): the challenge alone decides', async () => {
    const { user, authenticator } = await userWithPasskey(first.app);
    for (let round = 0; round < 5; round++) {
      const assertion = authenticator.assert(await signInOptions(first.app), { counter: 0 });
      const replies = await Promise.all([signIn(first.app, assertion), signIn(second.app, assertion)]);
      assert.deepEqual(replies.map((reply) => reply.statusCode).sort(), [200, 400], `round ${round}: ${replies.map((reply) => reply.body).join(' | ')}`);
    }
    const sessions = await first.db.selectFrom('sessions').select('amr').where('user_id', '=', user.id).execute();
    assert.equal(sessions.filter((session) => session.amr.join(' ') === 'hwk mfa').length, 5, 'one session a round');
  });
});

/** A 429 `rate_limited` whose Retry-After is at most `maxSeconds`. */
function assertRateLimited(reply: LightMyRequestResponse, maxSeconds: number) {
  assert.equal(problemOf(reply).code, 'rate_limited', reply.body);
  const seconds = Number(reply.headers['retry-after']);
  assert.ok(seconds >= 1 && seconds <= maxSeconds, `Retry-After ${seconds}`);
}
