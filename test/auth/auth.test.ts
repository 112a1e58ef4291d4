import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { sql } from 'kysely';
import { ensureFirstAdmin } from '../../src/users/first-admin.js';
import { decodeJwt, forgeJwt } from '../helpers/jwt.js';
import {
  ADMIN_EMAIL,
  JWT_SECRET,
  buildTestApp,
  createUser,
  login,
  loginAdmin,
  problemOf,
  uniqueEmail,
  type TestApp,
} from '../helpers/test-app.js';

describe('authentication', () => {
  let testApp: TestApp;

  before(async () => {
    testApp = await buildTestApp();
  });
  after(() => testApp.close());

  const inject = (options: InjectOptions) => testApp.app.inject(options);

  it('registers a user with role user and status active, and stores only a hash', async () => {
    const email = uniqueEmail();
    const response = await inject({
      method: 'POST',
      url: '/api/auth/register',
      payload: { email, password: 'password-123', name: 'Ada', phone: '+44 20 7946 0000' },
    });
    assert.equal(response.statusCode, 201);
    const user = response.json();
    assert.equal(user.email, email);
    assert.equal(user.role, 'user');
    assert.equal(user.status, 'active');
    assert.equal(user.balance, 0);
    assert.equal(user.currency, 'USD');
    assert.equal(user.version, 1);
    assert.equal(response.headers.etag, '"1"');
    assert.equal(response.headers.location, `/api/users/${user.id}`);
    assert.equal('password_hash' in user || 'password' in user, false);
    const stored = await testApp.db.selectFrom('users').selectAll().where('id', '=', user.id).executeTakeFirstOrThrow();
    assert.match(stored.password_hash ?? '', /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  });

  it('refuses a second account with the same email in another letter case (409 email_taken)', async () => {
    const email = uniqueEmail();
    await createUser(testApp.app, { email });
    const response = await inject({
      method: 'POST',
      url: '/api/auth/register',
      payload: { email: email.toUpperCase(), password: 'password-123', name: 'Copy' },
    });
    assert.equal(response.statusCode, 409);
    assert.equal(problemOf(response).code, 'email_taken');
  });

  it('validates registration fields', async () => {
    const cases = [
      { email: 'not-an-email', password: 'password-123', name: 'A' },
      { email: uniqueEmail(), password: 'short', name: 'A' },
      { email: uniqueEmail(), password: 'x'.repeat(129), name: 'A' },
      { email: uniqueEmail(), password: 'password-123', name: '' },
      { email: uniqueEmail(), password: 'password-123', name: 'x'.repeat(101) },
      { email: uniqueEmail(), password: 'password-123', name: 'A', phone: 'x'.repeat(33) },
      { email: uniqueEmail(), password: 'password-123', name: 'A', role: 'admin' },
      { email: uniqueEmail(), password: 'password-123' },
    ];
    for (const payload of cases) {
      const response = await inject({ method: 'POST', url: '/api/auth/register', payload });
      assert.equal(response.statusCode, 400, JSON.stringify(payload));
      assert.equal(problemOf(response).code, 'validation_failed');
    }
  });

  it('logs in with a JWT access token (HS256, typ at+jwt, iss, aud, exp, jti) and an opaque refresh token', async () => {
    const user = await createUser(testApp.app);
    const response = await inject({ method: 'POST', url: '/api/auth/login', payload: { email: user.email, password: user.password } });
    assert.equal(response.statusCode, 200);
    const body = response.json();
    assert.equal(body.token_type, 'Bearer');
    assert.equal(body.expires_in, 900);
    assert.match(body.refresh_token, /^[A-Za-z0-9_-]{43}$/);
    const { header, payload } = decodeJwt(body.access_token);
    assert.equal(header.alg, 'HS256');
    assert.equal(header.typ, 'at+jwt');
    assert.equal(payload.sub, user.id);
    assert.equal(payload.iss, testApp.config.jwtIssuer);
    assert.equal(payload.aud, testApp.config.jwtAudience);
    assert.equal(Number(payload.exp) - Number(payload.iat), 900);
    assert.equal(typeof payload.jti, 'string');
    const stored = await testApp.db.selectFrom('refresh_tokens').select('token_hash').where('user_id', '=', user.id).execute();
    assert.ok(stored.every((row) => row.token_hash !== body.refresh_token));
  });

  it('gives the same 401 invalid_credentials for an unknown email and a wrong password', async () => {
    const user = await createUser(testApp.app);
    const wrongPassword = await inject({ method: 'POST', url: '/api/auth/login', payload: { email: user.email, password: 'wrong-password' } });
    const unknownEmail = await inject({ method: 'POST', url: '/api/auth/login', payload: { email: uniqueEmail(), password: 'wrong-password' } });
    assert.equal(wrongPassword.statusCode, 401);
    assert.equal(unknownEmail.statusCode, 401);
    assert.deepEqual(problemOf(wrongPassword), problemOf(unknownEmail));
    assert.equal(problemOf(unknownEmail).code, 'invalid_credentials');
  });

  /**
   * The median ratio of a failed login of `otherEmail()`'s kind to a wrong password's, paired round
   * by round (the unknown-email test below says why so).
   */
  async function failedLoginRatio(otherEmail: () => string): Promise<{ ratio: number; ratios: number[] }> {
    const FIRST_ROUNDS = 9;
    const MOST_ROUNDS = 36;
    const users: { email: string }[] = [];
    for (let account = 0; account < MOST_ROUNDS / FIRST_ROUNDS; account++) users.push(await createUser(testApp.app));
    const time = async (email: string) => {
      const started = process.hrtime.bigint();
      const reply = await inject({ method: 'POST', url: '/api/auth/login', payload: { email, password: 'wrong-password' } });
      assert.equal(reply.statusCode, 401, reply.body);
      return Number(process.hrtime.bigint() - started) / 1e6;
    };
    const ratios: number[] = [];
    const measure = async (rounds: number) => {
      for (let round = ratios.length; round < rounds; round++) {
        const knownEmail = users[Math.floor(round / FIRST_ROUNDS)]!.email;
        if (round % 2 === 0) {
          const known = await time(knownEmail);
          ratios.push((await time(otherEmail())) / known);
        } else {
          const other = await time(otherEmail());
          ratios.push(other / (await time(knownEmail)));
        }
      }
    };
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    await measure(FIRST_ROUNDS);
    if (!(median(ratios) > 0.8 && median(ratios) < 1.25)) await measure(MOST_ROUNDS);
    return { ratio: median(ratios), ratios };
  }

  it('spends a password login of an account without a password (API.md section 19) on a real hash, as a wrong password', async () => {
    // Accounts made by an email code have no password hash; 36 of them, each asked once at most.
    const passwordless = Array.from({ length: 36 }, () => uniqueEmail('no-password'));
    const now = new Date();
    await testApp.db
      .insertInto('users')
      .values(passwordless.map((email) => ({ id: randomUUID(), email, name: 'No Password', phone: null, role: 'user' as const, status: 'active' as const, password_hash: null, email_verified: true, created_at: now, updated_at: now })))
      .execute();
    const first = await inject({ method: 'POST', url: '/api/auth/login', payload: { email: passwordless[0]!, password: 'wrong-password' } });
    assert.equal(problemOf(first).code, 'invalid_credentials');
    let next = 1;
    const { ratio, ratios } = await failedLoginRatio(() => passwordless[next++ % passwordless.length]!);
    assert.ok(ratio > 0.75 && ratio < 1.33, `no password/wrong password: median ratio ${ratio.toFixed(2)} of ${ratios.length} rounds (${ratios.map((each) => each.toFixed(2)).join(' ')})`);
  });

  it('spends unknown-email logins on a real hash, so they take as long as wrong passwords', async () => {
    // A first reading of 9 rounds, and 36 when its median is unclear: a median of 9 paired ratios
    // once read 0.70 on a busy CI machine. Each known account is asked at most 9 times, well under
    // LOGIN_ACCOUNT_FAILURE_LIMIT (20 an hour), whose refusal would answer without a hash. Each round
    // times a wrong password and an unknown email one after the other, first the one, then the
    // other, so a busy moment slows both of a pair; the median of the pairs' ratios, so one slow
    // request does not decide.
    const { ratio, ratios } = await failedLoginRatio(() => uniqueEmail());
    // Without the dummy hash an unknown email answers in a fifth of the time (0.19 over 36 rounds).
    assert.ok(ratio > 0.75 && ratio < 1.33, `unknown/known: median ratio ${ratio.toFixed(2)} of ${ratios.length} rounds (${ratios.map((each) => each.toFixed(2)).join(' ')})`);
  });

  it('accepts the login email in any letter case', async () => {
    const user = await createUser(testApp.app);
    const shouted = await login(testApp.app, user.email.toUpperCase(), user.password);
    assert.equal(shouted.id, user.id, 'the same account, signed in');
  });

  it('refuses requests without a token with 401 unauthenticated and WWW-Authenticate: Bearer', async () => {
    const response = await inject({ method: 'GET', url: '/api/users/profile' });
    assert.equal(response.statusCode, 401);
    assert.equal(problemOf(response).code, 'unauthenticated');
    assert.equal(response.headers['www-authenticate'], 'Bearer');
    const basic = await inject({ method: 'GET', url: '/api/users/profile', headers: { authorization: 'Basic YTpi' } });
    assert.equal(basic.statusCode, 401);
    assert.equal(problemOf(basic).code, 'unauthenticated');
  });

  it('refuses tampered, foreign and expired tokens with 401 invalid_token', async () => {
    const user = await createUser(testApp.app);
    const { payload } = decodeJwt(user.accessToken);
    const now = Math.floor(Date.now() / 1000);
    const header = { alg: 'HS256', typ: 'at+jwt' };
    const [headerPart, payloadPart, signature] = user.accessToken.split('.');
    const tokens: Record<string, string> = {
      'alg none': forgeJwt({ alg: 'none', typ: 'at+jwt' }, payload),
      'bad signature': `${headerPart}.${payloadPart}.${signature?.slice(0, -4)}AAAA`,
      'other secret': forgeJwt(header, payload, 'another-secret-that-is-at-least-32-bytes'),
      'wrong aud': forgeJwt(header, { ...payload, aud: 'someone-else' }, JWT_SECRET),
      'wrong iss': forgeJwt(header, { ...payload, iss: 'https://evil.example' }, JWT_SECRET),
      expired: forgeJwt(header, { ...payload, iat: now - 3600, exp: now - 60 }, JWT_SECRET),
      'other alg': forgeJwt({ alg: 'HS512', typ: 'at+jwt' }, payload, JWT_SECRET),
      'wrong typ': forgeJwt({ alg: 'HS256', typ: 'JWT' }, payload, JWT_SECRET),
      'unknown user': forgeJwt(header, { ...payload, sub: '00000000-0000-4000-8000-000000000000' }, JWT_SECRET),
      'jku to a key of the attacker': forgeJwt({ ...header, jku: 'https://evil.example/jwks.json', kid: 'evil' }, payload, 'attacker-secret-that-is-at-least-32-bytes'),
      'kid path traversal': forgeJwt({ ...header, kid: '../../../../dev/null' }, payload, ''),
      'embedded jwk': forgeJwt({ ...header, jwk: { kty: 'oct', k: Buffer.from('attacker-secret').toString('base64url') } }, payload, 'attacker-secret'),
      garbage: 'not.a.jwt',
    };
    for (const [name, token] of Object.entries(tokens)) {
      const response = await inject({ method: 'GET', url: '/api/users/profile', headers: { authorization: `Bearer ${token}` } });
      assert.equal(response.statusCode, 401, name);
      assert.equal(problemOf(response).code, 'invalid_token', name);
    }
    const valid = forgeJwt(header, payload, JWT_SECRET);
    const control = await inject({ method: 'GET', url: '/api/users/profile', headers: { authorization: `Bearer ${valid}` } });
    assert.equal(control.statusCode, 200, 'a correctly signed copy is accepted, so the refusals above are meaningful');
  });

  it('rotates refresh tokens, and re-use of a spent one after the reuse interval ends the session', async () => {
    const user = await createUser(testApp.app);
    const first = await inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: user.refreshToken } });
    assert.equal(first.statusCode, 200);
    const rotated = first.json();
    assert.notEqual(rotated.refresh_token, user.refreshToken);
    assert.equal((await inject({ method: 'GET', url: '/api/users/profile', headers: { authorization: `Bearer ${rotated.access_token}` } })).statusCode, 200);
    // REFRESH_REUSE_INTERVAL (10 s) has passed since the rotation.
    await testApp.db.updateTable('refresh_tokens').set({ used_at: new Date(Date.now() - 11_000) }).where('used_at', 'is not', null).execute();

    const reuse = await inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: user.refreshToken } });
    assert.equal(reuse.statusCode, 401);
    assert.equal(problemOf(reuse).code, 'invalid_token');

    const successor = await inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: rotated.refresh_token } });
    assert.equal(successor.statusCode, 401, 'the session ended with the re-use');
    const access = await inject({ method: 'GET', url: '/api/users/profile', headers: { authorization: `Bearer ${rotated.access_token}` } });
    assert.equal(access.statusCode, 401, "and so did the session's access tokens");
  });

  it('refuses an unknown refresh token and an expired one', async () => {
    const unknown = await inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: 'x'.repeat(43) } });
    assert.equal(unknown.statusCode, 401);
    assert.equal(problemOf(unknown).code, 'invalid_token');
    const user = await createUser(testApp.app);
    await testApp.db.updateTable('refresh_tokens').set({ expires_at: new Date(Date.now() - 1000) }).where('user_id', '=', user.id).execute();
    const expired = await inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: user.refreshToken } });
    assert.equal(expired.statusCode, 401);
  });

  it('refuses a refresh_token that is not a live refresh token, an access token included, whatever its length (401 invalid_token, API.md section 17)', async () => {
    const user = await createUser(testApp.app);
    const notRefreshTokens = {
      'an access token': user.accessToken,
      'an empty string': '',
      '513 characters': 'r'.repeat(513),
      '60000 characters': 'r'.repeat(60_000),
    };
    for (const [name, refreshToken] of Object.entries(notRefreshTokens)) {
      const refresh = await inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: refreshToken } });
      assert.equal(refresh.statusCode, 401, name);
      assert.equal(problemOf(refresh).code, 'invalid_token', name);
      // Logout reveals nothing whatever it is sent, and ends no session for a token that is not one.
      const logout = await inject({ method: 'POST', url: '/api/auth/logout', payload: { refresh_token: refreshToken } });
      assert.equal(logout.statusCode, 204, name);
    }
    assert.equal((await inject({ method: 'GET', url: '/api/users/profile', headers: { authorization: `Bearer ${user.accessToken}` } })).statusCode, 200);
    assert.equal((await inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: user.refreshToken } })).statusCode, 200, 'the live one still works');
    // Beyond the body limit the body is refused as a whole, before any token is read.
    const huge = await inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: 'r'.repeat(70_000) } });
    assert.equal(huge.statusCode, 413);
  });

  it('answers a token of another kind, or of any length, in a body as an unknown token of that kind, not a schema error', async () => {
    const user = await createUser(testApp.app);
    for (const token of [user.accessToken, user.refreshToken, '', 't'.repeat(5000)]) {
      const reset = await inject({ method: 'POST', url: '/api/auth/password-reset/confirm', payload: { token, new_password: 'another-long-passphrase' } });
      assert.equal(reset.statusCode, 400);
      assert.equal(problemOf(reset).code, 'invalid_reset_token');
      const verify = await inject({ method: 'POST', url: '/api/auth/verify-email', payload: { token } });
      assert.equal(verify.statusCode, 400);
      assert.equal(problemOf(verify).code, 'invalid_verification_token');
      const secondStep = await inject({ method: 'POST', url: '/api/auth/login/mfa', payload: { mfa_token: token, code: '123456' } });
      assert.equal(secondStep.statusCode, 401);
      assert.equal(problemOf(secondStep).code, 'invalid_mfa_token');
      const options = await inject({ method: 'POST', url: '/api/auth/mfa/webauthn/authentication-options', payload: { mfa_token: token } });
      assert.equal(options.statusCode, 401);
      assert.equal(problemOf(options).code, 'invalid_mfa_token');
    }
  });

  it('logs out: 204, and the refresh token no longer works', async () => {
    const user = await createUser(testApp.app);
    const response = await inject({ method: 'POST', url: '/api/auth/logout', payload: { refresh_token: user.refreshToken } });
    assert.equal(response.statusCode, 204);
    assert.equal(response.body, '');
    const refresh = await inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: user.refreshToken } });
    assert.equal(refresh.statusCode, 401);
  });

  it("refuses a suspended user's refresh with 403 account_suspended, and its login only after a correct password", async () => {
    const admin = await loginAdmin(testApp.app);
    const user = await createUser(testApp.app);
    const suspend = await inject({ method: 'PUT', url: `/api/users/${user.id}/status`, headers: admin.auth, payload: { status: 'suspended' } });
    assert.equal(suspend.statusCode, 200);
    const refresh = await inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: user.refreshToken } });
    assert.equal(refresh.statusCode, 403);
    assert.equal(problemOf(refresh).code, 'account_suspended');
    const rightPassword = await inject({ method: 'POST', url: '/api/auth/login', payload: { email: user.email, password: user.password } });
    assert.equal(rightPassword.statusCode, 403);
    assert.equal(problemOf(rightPassword).code, 'account_suspended');
    const wrongPassword = await inject({ method: 'POST', url: '/api/auth/login', payload: { email: user.email, password: 'not-the-password' } });
    assert.equal(wrongPassword.statusCode, 401);
    assert.equal(problemOf(wrongPassword).code, 'invalid_credentials');
  });

  it('created the bootstrap admin from ADMIN_EMAIL and ADMIN_PASSWORD', async () => {
    const admin = await loginAdmin(testApp.app);
    const profile = await inject({ method: 'GET', url: '/api/users/profile', headers: admin.auth });
    assert.equal(profile.json().email, ADMIN_EMAIL);
    assert.equal(profile.json().role, 'admin');
  });
});

describe('first start without ADMIN_EMAIL and ADMIN_PASSWORD', () => {
  it('creates admin@localhost with a random password printed once, and not again on the next start', async () => {
    const printed: string[] = [];
    const first = await buildTestApp({ environment: { ADMIN_EMAIL: '', ADMIN_PASSWORD: '' }, tellOperator: (line) => printed.push(line) });
    try {
      assert.equal(printed.length, 1);
      const password = /password (\S+)/.exec(printed[0] ?? '')?.[1];
      assert.ok(password && password.length >= 20);
      const admin = await login(first.app, 'admin@localhost', password);
      assert.ok(admin.id);
      const admins = await sql<{ count: number }>`select count(*)::int as count from users where role = 'admin'`.execute(first.db);
      assert.equal(admins.rows[0]?.count, 1);
      await ensureFirstAdmin(first.db, { email: undefined, password: undefined }, first.app.log, first.app.accountMail, (line) => printed.push(line));
      assert.equal(printed.length, 1, 'a second start prints nothing and creates no admin');
    } finally {
      await first.close();
    }
  });
});

describe('first start with an admin already there', () => {
  it('says that ADMIN_EMAIL was not used, in the log and in plain words on stderr', async () => {
    const logLines: string[] = [];
    const told: string[] = [];
    const testApp = await buildTestApp({ logLines });
    try {
      await ensureFirstAdmin(testApp.db, { email: 'another-admin@example.com', password: 'another-password' }, testApp.app.log, testApp.app.accountMail, (line) => told.push(line));
      assert.deepEqual(told, ['An admin exists already, so ADMIN_EMAIL (another-admin@example.com) and ADMIN_PASSWORD were not used: they only create the first admin.']);
      const warning = logLines.map((line) => JSON.parse(line)).find((entry) => entry.level === 40 && /ADMIN_EMAIL/.test(entry.msg));
      assert.ok(warning, 'a warning was logged');
      assert.match(warning.msg, /ADMIN_EMAIL and ADMIN_PASSWORD were not used/);
      assert.equal(warning.email, 'another-admin@example.com');
    } finally {
      await testApp.close();
    }
  });
});

describe('registration switched off', () => {
  it('answers 403 forbidden when ALLOW_REGISTRATION=false', async () => {
    const testApp = await buildTestApp({ environment: { ALLOW_REGISTRATION: 'false' } });
    try {
      const response = await testApp.app.inject({
        method: 'POST',
        url: '/api/auth/register',
        payload: { email: uniqueEmail(), password: 'password-123', name: 'A' },
      });
      assert.equal(response.statusCode, 403);
      assert.equal(problemOf(response).code, 'forbidden');
    } finally {
      await testApp.close();
    }
  });
});
