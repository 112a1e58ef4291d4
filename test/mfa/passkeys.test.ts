import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { decodeJwt } from '../helpers/jwt.js';
import { SoftwareAuthenticator } from '../helpers/software-authenticator.js';
import { createUser, problemOf, useAppWithAdmin, type Session } from '../helpers/test-app.js';
import { bearer, enrolTotp, firstStep } from './mfa-helpers.js';

const PUBLIC_URL = 'https://shop.example.com';
const ENCRYPTION_KEY = randomBytes(32).toString('base64');

/** Registers a passkey of the authenticator for the session's user; returns the reply. */
async function registerPasskey(app: FastifyInstance, user: Session, authenticator: SoftwareAuthenticator, name?: string) {
  const options = await app.inject({ method: 'POST', url: '/api/auth/mfa/webauthn/registration-options', headers: user.auth });
  assert.equal(options.statusCode, 200, options.body);
  const response = authenticator.register(options.json());
  return app.inject({ method: 'POST', url: '/api/auth/mfa/webauthn', headers: user.auth, payload: { ...(name ? { name } : {}), response } });
}

/** API.md section 12: passkeys, through a software authenticator that really signs (P-256, attestation `none`). */
describe('second factors: passkeys', () => {
  const fixture = useAppWithAdmin({ environment: { PUBLIC_URL, SIGNING_KEY_ENCRYPTION_KEY: ENCRYPTION_KEY } });

  it('registers a passkey: options for this relying party, the challenge spent, the first factor bringing recovery codes', async () => {
    const { app, db } = fixture;
    const user = await createUser(app);
    const authenticator = new SoftwareAuthenticator(PUBLIC_URL, 'shop.example.com');
    const options = await app.inject({ method: 'POST', url: '/api/auth/mfa/webauthn/registration-options', headers: user.auth });
    assert.equal(options.statusCode, 200);
    const creation = options.json();
    assert.equal(creation.rp.id, 'shop.example.com', 'WEBAUTHN_RP_ID defaults to the host of PUBLIC_URL');
    assert.equal(creation.attestation, 'none');
    assert.equal(creation.authenticatorSelection.userVerification, 'preferred');
    assert.equal(creation.user.name, user.email);
    // EdDSA, ES256, RS256 on every Node.js (no experimental ML-DSA-44 where the runtime has it).
    assert.deepEqual(creation.pubKeyCredParams.map((parameter: { alg: number }) => parameter.alg), [-8, -7, -257]);
    const response = authenticator.register(creation);
    const registered = await app.inject({ method: 'POST', url: '/api/auth/mfa/webauthn', headers: user.auth, payload: { name: 'Laptop', response } });
    assert.equal(registered.statusCode, 201, registered.body);
    assert.equal(registered.headers['cache-control'], 'no-store');
    assert.equal(registered.json().type, 'webauthn');
    assert.equal(registered.json().name, 'Laptop');
    assert.equal(registered.json().recovery_codes.length, 10);
    const stored = await db.selectFrom('mfa_factors').selectAll().where('id', '=', registered.json().id).executeTakeFirstOrThrow();
    assert.equal(stored.credential_id, response.id);
    assert.deepEqual(stored.transports, ['internal']);
    assert.ok(stored.confirmed_at);
    // The challenge was spent: the same response again is refused.
    const again = await app.inject({ method: 'POST', url: '/api/auth/mfa/webauthn', headers: user.auth, payload: { response } });
    assert.equal(problemOf(again).code, 'invalid_mfa_code');
    // The next options exclude it; a second passkey brings no new codes.
    const next = (await app.inject({ method: 'POST', url: '/api/auth/mfa/webauthn/registration-options', headers: user.auth })).json();
    assert.deepEqual(next.excludeCredentials.map((descriptor: { id: string }) => descriptor.id), [response.id]);
    const second = await app.inject({ method: 'POST', url: '/api/auth/mfa/webauthn', headers: user.auth, payload: { response: authenticator.register(next) } });
    assert.equal(second.statusCode, 201);
    assert.equal(second.json().name, 'Passkey');
    assert.equal(second.json().recovery_codes, undefined);
    assert.equal((await app.inject({ method: 'GET', url: '/api/auth/mfa', headers: user.auth })).json().factors.length, 2);
  });

  it('refuses a registration from another origin, for another challenge, or for another session', async () => {
    const { app } = fixture;
    const user = await createUser(app);
    const authenticator = new SoftwareAuthenticator(PUBLIC_URL, 'shop.example.com');
    const creation = (await app.inject({ method: 'POST', url: '/api/auth/mfa/webauthn/registration-options', headers: user.auth })).json();
    const foreign = authenticator.register(creation, { origin: 'https://evil.example' });
    assert.equal(problemOf(await app.inject({ method: 'POST', url: '/api/auth/mfa/webauthn', headers: user.auth, payload: { response: foreign } })).code, 'invalid_mfa_code');
    const invented = authenticator.register({ ...creation, challenge: randomBytes(32).toString('base64url') });
    assert.equal(problemOf(await app.inject({ method: 'POST', url: '/api/auth/mfa/webauthn', headers: user.auth, payload: { response: invented } })).code, 'invalid_mfa_code');
    const other = await createUser(app);
    const fresh = (await app.inject({ method: 'POST', url: '/api/auth/mfa/webauthn/registration-options', headers: user.auth })).json();
    const stolen = authenticator.register(fresh);
    assert.equal(problemOf(await app.inject({ method: 'POST', url: '/api/auth/mfa/webauthn', headers: other.auth, payload: { response: stolen } })).code, 'invalid_mfa_code', "another user's challenge");
    assert.equal((await app.inject({ method: 'POST', url: '/api/auth/mfa/webauthn', headers: user.auth, payload: { response: stolen } })).statusCode, 201, 'still good for its own session');
  });

  it('logs in with a passkey: a challenge tied to the mfa_token, spent by the first assertion, good or bad', async () => {
    const { app } = fixture;
    const user = await createUser(app);
    const authenticator = new SoftwareAuthenticator(PUBLIC_URL, 'shop.example.com');
    assert.equal((await registerPasskey(app, user, authenticator)).statusCode, 201);
    const { mfaToken, methods } = await firstStep(app, user.email, user.password);
    assert.deepEqual(methods, ['webauthn', 'recovery_code']);
    const optionsReply = await app.inject({ method: 'POST', url: '/api/auth/mfa/webauthn/authentication-options', payload: { mfa_token: mfaToken } });
    assert.equal(optionsReply.statusCode, 200, optionsReply.body);
    const request = optionsReply.json();
    assert.equal(request.rpId, 'shop.example.com');
    assert.equal(request.allowCredentials.length, 1);
    // A bad signature spends the challenge: the good assertion after it is refused too.
    const tampered = authenticator.assert(request, { tamper: true });
    assert.equal(problemOf(await app.inject({ method: 'POST', url: '/api/auth/login/mfa', payload: { mfa_token: mfaToken, webauthn: tampered } })).code, 'invalid_mfa_code');
    const good = authenticator.assert(request);
    assert.equal(problemOf(await app.inject({ method: 'POST', url: '/api/auth/login/mfa', payload: { mfa_token: mfaToken, webauthn: good } })).code, 'invalid_mfa_code');
    const fresh = (await app.inject({ method: 'POST', url: '/api/auth/mfa/webauthn/authentication-options', payload: { mfa_token: mfaToken } })).json();
    const loggedIn = await app.inject({ method: 'POST', url: '/api/auth/login/mfa', payload: { mfa_token: mfaToken, webauthn: authenticator.assert(fresh) } });
    assert.equal(loggedIn.statusCode, 200, loggedIn.body);
    assert.deepEqual(decodeJwt(loggedIn.json().access_token).payload.amr, ['pwd', 'hwk', 'mfa']);
    assert.equal(problemOf(await app.inject({ method: 'POST', url: '/api/auth/mfa/webauthn/authentication-options', payload: { mfa_token: mfaToken } })).code, 'invalid_mfa_token', 'the token is spent');
    assert.equal(problemOf(await app.inject({ method: 'POST', url: '/api/auth/mfa/webauthn/authentication-options', payload: {} })).code, 'unauthenticated');
  });

  it('refuses an assertion whose counter did not move (a cloned key), from another origin, or for another login', async () => {
    const { app } = fixture;
    const user = await createUser(app);
    const authenticator = new SoftwareAuthenticator(PUBLIC_URL, 'shop.example.com');
    await registerPasskey(app, user, authenticator);
    const login = async () => (await firstStep(app, user.email, user.password)).mfaToken;
    const optionsFor = async (mfaToken: string) => (await app.inject({ method: 'POST', url: '/api/auth/mfa/webauthn/authentication-options', payload: { mfa_token: mfaToken } })).json();
    const attempt = (mfaToken: string, webauthn: unknown) => app.inject({ method: 'POST', url: '/api/auth/login/mfa', payload: { mfa_token: mfaToken, webauthn } });

    const first = await login();
    assert.equal((await attempt(first, authenticator.assert(await optionsFor(first), { counter: 10 }))).statusCode, 200);
    const second = await login();
    assert.equal(problemOf(await attempt(second, authenticator.assert(await optionsFor(second), { counter: 10 }))).code, 'invalid_mfa_code', 'the counter must move past 10');
    assert.equal(problemOf(await attempt(second, authenticator.assert(await optionsFor(second), { origin: 'https://evil.example' }))).code, 'invalid_mfa_code');
    const third = await login();
    const forThird = await optionsFor(third);
    assert.equal(problemOf(await attempt(second, authenticator.assert(forThird))).code, 'invalid_mfa_code', "another login's challenge");
    assert.equal((await attempt(second, authenticator.assert(await optionsFor(second)))).statusCode, 200);
  });

  it('steps up with a passkey: a challenge of the session, through the access token', async () => {
    const { app } = fixture;
    const user = await createUser(app);
    const authenticator = new SoftwareAuthenticator(PUBLIC_URL, 'shop.example.com');
    await registerPasskey(app, user, authenticator);
    const request = await app.inject({ method: 'POST', url: '/api/auth/mfa/webauthn/authentication-options', headers: user.auth });
    assert.equal(request.statusCode, 200, request.body);
    const verified = await app.inject({ method: 'POST', url: '/api/auth/mfa/verify', headers: user.auth, payload: { webauthn: authenticator.assert(request.json()) } });
    assert.equal(verified.statusCode, 200, verified.body);
    assert.ok(Math.abs(Date.parse(verified.json().verified_at) - Date.now()) < 5_000);
    // A challenge made for one session does not verify another.
    const { mfaToken } = await firstStep(app, user.email, user.password);
    const forLogin = (await app.inject({ method: 'POST', url: '/api/auth/mfa/webauthn/authentication-options', payload: { mfa_token: mfaToken } })).json();
    assert.equal(problemOf(await app.inject({ method: 'POST', url: '/api/auth/mfa/verify', headers: user.auth, payload: { webauthn: authenticator.assert(forLogin) } })).code, 'invalid_mfa_code');
    const noPasskey = await createUser(app);
    assert.equal((await app.inject({ method: 'POST', url: '/api/auth/mfa/webauthn/authentication-options', headers: noPasskey.auth })).statusCode, 404);
    assert.equal((await app.inject({ method: 'POST', url: '/api/auth/mfa/webauthn/authentication-options', headers: bearer('not-a-token') })).statusCode, 401);
  });

  it('keeps TOTP secrets sealed with SIGNING_KEY_ENCRYPTION_KEY', async () => {
    const { app, db } = fixture;
    const user = await createUser(app);
    const { started } = await enrolTotp(app, user);
    const stored = await db.selectFrom('mfa_factors').select('totp_secret').where('id', '=', started.id).executeTakeFirstOrThrow();
    assert.match(String(stored.totp_secret), /^aes256gcm:/);
    assert.ok(!String(stored.totp_secret).includes(started.secret));
  });
});
