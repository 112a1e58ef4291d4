import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { sql } from 'kysely';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { toEventResponse } from '../../src/events/event-response.js';
import { webhookPayloadSchema } from '../../src/events/webhook-payloads.js';
import { decodeJwt } from '../helpers/jwt.js';
import { SmtpCatcher } from '../helpers/smtp-catcher.js';
import { buildTestApp, createUser, loginAdmin, onPostgres, problemOf, uniqueEmail, type TestApp } from '../helpers/test-app.js';
import { enrolTotp } from '../mfa/mfa-helpers.js';

const ajv = new Ajv.default({ allErrors: true, strict: false });
addFormats.default(ajv);

const CODE_IN_MAIL = /Your code to sign in is (\d{6})\./;

/** The codes mailed to `address` so far, oldest first. */
const codesTo = (catcher: SmtpCatcher, address: string) =>
  catcher.mails.filter((mail) => mail.to.includes(address.toLowerCase()) || mail.to.includes(address)).flatMap((mail) => CODE_IN_MAIL.exec(mail.text)?.[1] ?? []);

describe('sign-in by email code (API.md section 19)', () => {
  let testApp: TestApp;
  let catcher: SmtpCatcher;
  before(async () => {
    catcher = new SmtpCatcher();
    testApp = await buildTestApp({ environment: { SMTP_URL: await catcher.start(), LOGIN_RATE_LIMIT: '8', LOGIN_ACCOUNT_FAILURE_LIMIT: '6' } });
  });
  after(async () => {
    await testApp.close();
    await catcher.stop();
  });
  const inject = (request: InjectOptions) => testApp.app.inject(request);
  const codeRows = (email: string) => testApp.db.selectFrom('email_codes').selectAll().where(sql<string>`lower(email)`, '=', email.toLowerCase()).orderBy('created_at').execute();

  /** Asks for a code and waits until the request's work (after the reply) has made it and the mail has gone. */
  async function requestCode(email: string): Promise<string | undefined> {
    const rowsBefore = (await codeRows(email)).length;
    const mailsBefore = codesTo(catcher, email).length;
    const reply = await inject({ method: 'POST', url: '/api/auth/email-code', payload: { email } });
    assert.equal(reply.statusCode, 202, reply.body);
    assert.deepEqual(reply.json(), { status: 'accepted' });
    // The code is made after the reply: wait for the request's work to end (a row, or none when refused).
    for (let waited = 0; waited < 5_000 && (await codeRows(email)).length === rowsBefore; waited += 25) await new Promise((resolve) => setTimeout(resolve, 25));
    if ((await codeRows(email)).length === rowsBefore) return undefined;
    for (let waited = 0; waited < 15_000; waited += 50) {
      await testApp.jobs.runNow('send-mail');
      const codes = codesTo(catcher, email);
      if (codes.length > mailsBefore) return codes.at(-1);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`no code mailed to ${email}`);
  }
  const signIn = (email: string, code: string) => inject({ method: 'POST', url: '/api/auth/login/email-code', payload: { email, code } });
  const wrongOf = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

  it('answers 202 alike for known and unknown addresses, mails a 6-digit code stored only as a hash, and signs in once with amr ["email"]', async () => {
    const user = await createUser(testApp.app);
    const code = await requestCode(user.email);
    assert.match(code!, /^\d{6}$/);
    const [row] = await codeRows(user.email);
    assert.equal(row!.user_id, user.id);
    assert.notEqual(row!.code_hash, code);
    assert.ok(!JSON.stringify(row).includes(code!), 'the code itself is not stored');
    assert.ok(Math.abs(row!.expires_at.getTime() - row!.created_at.getTime() - 600_000) < 1000, 'EMAIL_CODE_TTL defaults to 600 s');

    const signedIn = await signIn(user.email.toUpperCase(), code!.replace(/(\d{3})/, '$1 '));
    assert.equal(signedIn.statusCode, 200, signedIn.body);
    assert.equal(signedIn.headers['cache-control'], 'no-store');
    const { payload } = decodeJwt(signedIn.json().access_token);
    assert.equal(payload.sub, user.id);
    assert.deepEqual(payload.amr, ['email']);
    const profile = await inject({ method: 'GET', url: '/api/users/profile', headers: { authorization: `Bearer ${signedIn.json().access_token}` } });
    assert.equal(profile.json().email_verified, true, 'the code verified the address');
    assert.equal(profile.json().has_password, true);
    const verified = await testApp.db.selectFrom('events').select('type').where('subject_id', '=', user.id).where('type', '=', 'user.email_verified').execute();
    assert.equal(verified.length, 1);

    const again = await signIn(user.email, code!);
    assert.equal(again.statusCode, 400);
    assert.equal(problemOf(again).code, 'invalid_email_code', 'a code signs in once');
  });

  it('creates an account for a new address on its right code: role user, verified, no password, named by the local part', async () => {
    // A local part of 110 characters: the name is its first 100.
    const email = `Zoe.${Math.random().toString(36).slice(2, 8)}.${'x'.repeat(99)}@example.com`;
    const code = await requestCode(email);
    assert.ok(code);
    assert.equal((await codeRows(email))[0]!.user_id, null);
    const signedIn = await signIn(email, code!);
    assert.equal(signedIn.statusCode, 200, signedIn.body);
    const auth = { authorization: `Bearer ${signedIn.json().access_token}` };
    const profile = (await inject({ method: 'GET', url: '/api/users/profile', headers: auth })).json();
    assert.equal(profile.email, email);
    assert.equal(profile.role, 'user');
    assert.equal(profile.status, 'active');
    assert.equal(profile.email_verified, true);
    assert.equal(profile.has_password, false);
    assert.equal(profile.name, email.split('@')[0]!.slice(0, 100));
    assert.equal(profile.name.length, 100);
    const stored = await testApp.db.selectFrom('users').select('password_hash').where('id', '=', profile.id).executeTakeFirstOrThrow();
    assert.equal(stored.password_hash, null);
    const registered = await testApp.db.selectFrom('events').selectAll().where('subject_id', '=', profile.id).where('type', '=', 'user.registered').executeTakeFirstOrThrow();
    assert.equal(registered.data.method, 'email_code');
    const validate = ajv.compile(webhookPayloadSchema('user.registered'));
    assert.ok(validate(JSON.parse(JSON.stringify(toEventResponse(registered)))), `the webhook payload schema: ${ajv.errorsText(validate.errors)}`);
    assert.equal(registered.actor_id, profile.id);
    const verificationMails = catcher.mails.filter((mail) => mail.to.includes(email.toLowerCase()) && mail.text.includes('verify-email'));
    assert.equal(verificationMails.length, 0, 'no verification link: the code verified the address');

    // A password login of an account without a password is the 401 of a wrong password.
    const byPassword = await inject({ method: 'POST', url: '/api/auth/login', payload: { email, password: 'anything-at-all' } });
    assert.equal(byPassword.statusCode, 401);
    assert.equal(problemOf(byPassword).code, 'invalid_credentials');
    // The admin sees has_password too.
    const admin = await loginAdmin(testApp.app);
    assert.equal((await inject({ method: 'GET', url: `/api/users/${profile.id}`, headers: admin.auth })).json().has_password, false);
  });

  it('replaces the live code with a new one, and sends at most 3 an hour per address (the 4th replaces nothing)', async () => {
    const user = await createUser(testApp.app);
    const first = await requestCode(user.email);
    const second = await requestCode(user.email);
    const third = await requestCode(user.email);
    const fourth = await requestCode(user.email);
    assert.equal(fourth, undefined, 'nothing made beyond 3 an hour');
    assert.equal((await codeRows(user.email)).length, 3);
    assert.equal(codesTo(catcher, user.email).length, 3);
    if (first !== third) {
      const replaced = await signIn(user.email, first!);
      assert.equal(problemOf(replaced).code, 'invalid_email_code', 'a newer code replaced it');
    }
    assert.ok(second);
    const signedIn = await signIn(user.email, third!);
    assert.equal(signedIn.statusCode, 200, 'the refused 4th request left the 3rd code live');
  });

  it('rate-limits code requests per client address and email under LOGIN_RATE_LIMIT (8 here)', async () => {
    const email = uniqueEmail('limited');
    const statuses: number[] = [];
    for (let index = 0; index < 9; index++) statuses.push((await inject({ method: 'POST', url: '/api/auth/email-code', payload: { email } })).statusCode);
    assert.deepEqual(statuses, [...Array(8).fill(202), 429]);
    const refused = await inject({ method: 'POST', url: '/api/auth/email-code', payload: { email } });
    assert.ok(Number(refused.headers['retry-after']) > 0);
  });

  it('kills a code at its 5th wrong try, and counts wrong codes toward LOGIN_ACCOUNT_FAILURE_LIMIT (6 here)', async () => {
    const user = await createUser(testApp.app);
    const code = await requestCode(user.email);
    for (let index = 0; index < 5; index++) {
      const wrong = await signIn(user.email, wrongOf(code!));
      assert.equal(wrong.statusCode, 400);
      assert.equal(problemOf(wrong).code, 'invalid_email_code');
    }
    assert.equal((await codeRows(user.email))[0]!.failures, 5);
    assert.equal((await signIn(user.email, code!)).statusCode, 400, 'dead after 5 wrong tries, the right code included');
    // 6 failed logins now (5 wrong codes and the dead one): the account's logins are 429, by code or password.
    const fresh = await requestCode(user.email);
    const refused = await signIn(user.email, fresh!);
    assert.equal(refused.statusCode, 429);
    assert.ok(Number(refused.headers['retry-after']) > 0);
    const byPassword = await inject({ method: 'POST', url: '/api/auth/login', payload: { email: user.email, password: user.password } });
    assert.equal(byPassword.statusCode, 429, 'wrong codes count as wrong passwords');
  });

  it("answers a suspended user's right code 403 account_suspended, and a suspension spends the live code", async () => {
    const admin = await loginAdmin(testApp.app);
    const user = await createUser(testApp.app);
    const spent = await requestCode(user.email);
    const setStatus = (status: string) => inject({ method: 'PUT', url: `/api/users/${user.id}/status`, headers: admin.auth, payload: { status } });
    assert.equal((await setStatus('suspended')).statusCode, 200);
    const code = await requestCode(user.email);
    assert.ok(code, 'a suspended account still gets its code');
    const refused = await signIn(user.email, code!);
    assert.equal(refused.statusCode, 403);
    assert.equal(problemOf(refused).code, 'account_suspended');
    assert.equal((await setStatus('active')).statusCode, 200);
    if (spent !== code) assert.equal(problemOf(await signIn(user.email, spent!)).code, 'invalid_email_code', 'the suspension spent the code');
    assert.equal((await signIn(user.email, code!)).statusCode, 400, 'the refused right code was spent too');
    const wrongIsStill400 = await signIn(user.email, wrongOf(code!));
    assert.equal(wrongIsStill400.statusCode, 400);
  });

  it('spends the live code on a password change, an email change and a deletion', async () => {
    const admin = await loginAdmin(testApp.app);
    const user = await createUser(testApp.app);
    const beforePasswordChange = await requestCode(user.email);
    const changed = await inject({ method: 'PUT', url: '/api/users/change-password', headers: user.auth, payload: { current_password: user.password, new_password: 'another-password-9' } });
    assert.equal(changed.statusCode, 200, changed.body);
    assert.equal(problemOf(await signIn(user.email, beforePasswordChange!)).code, 'invalid_email_code');
    assert.ok((await codeRows(user.email)).every((row) => row.used_at !== null));

    const auth = { authorization: `Bearer ${changed.json().access_token}` };
    const beforeEmailChange = await requestCode(user.email);
    const newEmail = uniqueEmail('moved');
    const moved = await inject({ method: 'PATCH', url: '/api/users/profile', headers: auth, payload: { email: newEmail, current_password: 'another-password-9' } });
    assert.equal(moved.statusCode, 200, moved.body);
    assert.equal(problemOf(await signIn(user.email, beforeEmailChange!)).code, 'invalid_email_code');

    const beforeDeletion = await requestCode(newEmail);
    assert.equal((await inject({ method: 'DELETE', url: `/api/users/${user.id}`, headers: admin.auth })).statusCode, 204);
    const afterDeletion = await signIn(newEmail, beforeDeletion!);
    assert.equal(afterDeletion.statusCode, 400, 'the deletion spent the code: it neither signs in nor creates an account');
    assert.equal(problemOf(afterDeletion).code, 'invalid_email_code');
  });

  it('asks a user with a second factor for it (403 mfa_required), and the session then carries amr ["email","otp","mfa"]', async () => {
    const user = await createUser(testApp.app);
    const { device } = await enrolTotp(testApp.app, user);
    const code = await requestCode(user.email);
    const first = await signIn(user.email, code!);
    assert.equal(first.statusCode, 403);
    const problem = problemOf(first);
    assert.equal(problem.code, 'mfa_required');
    assert.equal(first.headers['cache-control'], 'no-store');
    const body = first.json();
    assert.match(body.mfa_token, /^[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(body.methods.sort(), ['recovery_code', 'totp']);
    const second = await inject({ method: 'POST', url: '/api/auth/login/mfa', payload: { mfa_token: body.mfa_token, code: device.next() } });
    assert.equal(second.statusCode, 200, second.body);
    assert.deepEqual(decodeJwt(second.json().access_token).payload.amr, ['email', 'otp', 'mfa']);
    // A password login's second step keeps amr ["pwd","otp","mfa"].
    const byPassword = await inject({ method: 'POST', url: '/api/auth/login', payload: { email: user.email, password: user.password } });
    const completed = await inject({ method: 'POST', url: '/api/auth/login/mfa', payload: { mfa_token: byPassword.json().mfa_token, code: device.next() } });
    assert.deepEqual(decodeJwt(completed.json().access_token).payload.amr, ['pwd', 'otp', 'mfa']);
  });

  it('refuses an unknown address, a code never asked for and a malformed one alike (400 invalid_email_code); a non-address is a 400 validation error', async () => {
    for (const [email, code] of [[uniqueEmail('never'), '123456'], [uniqueEmail('never'), 'abcdef'], [uniqueEmail('never'), '1234567890']] as const) {
      const refused = await signIn(email, code);
      assert.equal(refused.statusCode, 400);
      assert.equal(problemOf(refused).code, 'invalid_email_code');
    }
    const notAnAddress = await inject({ method: 'POST', url: '/api/auth/email-code', payload: { email: 'not-an-address' } });
    assert.equal(notAnAddress.statusCode, 400);
    assert.equal(problemOf(notAnAddress).code, 'validation_failed');
  });

  /** A new account made by an email code: its address, session header, and id. */
  async function passwordlessAccount() {
    const email = uniqueEmail('codeonly');
    const signedIn = await signIn(email, (await requestCode(email))!);
    assert.equal(signedIn.statusCode, 200, signedIn.body);
    const auth = { authorization: `Bearer ${signedIn.json().access_token}` };
    return { email, auth };
  }

  it('takes an email code instead of the password from an account without one: email change, password change, self-deletion', async () => {
    const { email, auth } = await passwordlessAccount();
    const patch = (payload: object) => inject({ method: 'PATCH', url: '/api/users/profile', headers: auth, payload });
    const newEmail = uniqueEmail('codeonly-moved');
    const noProof = await patch({ email: newEmail });
    assert.equal(noProof.statusCode, 400);
    assert.equal(problemOf(noProof).errors?.[0]?.path, '/email_code');
    const withPassword = await patch({ email: newEmail, current_password: 'anything-at-all' });
    assert.equal(withPassword.statusCode, 400);
    assert.equal(problemOf(withPassword).errors?.[0]?.path, '/current_password');
    const code = await requestCode(email);
    const wrong = await patch({ email: newEmail, email_code: wrongOf(code!) });
    assert.equal(wrong.statusCode, 400);
    assert.equal(problemOf(wrong).code, 'invalid_email_code');
    assert.equal((await codeRows(email)).at(-1)!.failures, 1, 'the wrong code counted on the code');
    const failures = await testApp.db.selectFrom('account_attempts').select('id').where('kind', '=', 'login_failure').where('subject', '=', email.toLowerCase()).execute();
    assert.equal(failures.length, 1, 'and as a failed login of the account');
    const moved = await patch({ email: newEmail, email_code: code! });
    assert.equal(moved.statusCode, 200, moved.body);
    assert.equal(moved.json().email, newEmail);
    assert.equal((await patch({ name: 'Again', email_code: code! })).statusCode, 400, 'the change spent the code');

    // Its first password, set with a code; from then on it is an account with a password.
    const setCode = await requestCode(newEmail);
    const set = await inject({ method: 'PUT', url: '/api/users/change-password', headers: auth, payload: { email_code: setCode!, new_password: 'first-password-1' } });
    assert.equal(set.statusCode, 200, set.body);
    const newAuth = { authorization: `Bearer ${set.json().access_token}` };
    const profile = (await inject({ method: 'GET', url: '/api/users/profile', headers: newAuth })).json();
    assert.equal(profile.has_password, true);
    assert.equal((await inject({ method: 'POST', url: '/api/auth/login', payload: { email: newEmail, password: 'first-password-1' } })).statusCode, 200);
    const codeFromPasswordAccount = await inject({ method: 'DELETE', url: '/api/users/profile', headers: newAuth, payload: { email_code: '123456' } });
    assert.equal(codeFromPasswordAccount.statusCode, 400);
    assert.equal(problemOf(codeFromPasswordAccount).errors?.[0]?.path, '/email_code');

    // Another account without a password deletes itself with a code.
    const other = await passwordlessAccount();
    const deleteCode = await requestCode(other.email);
    const noCode = await inject({ method: 'DELETE', url: '/api/users/profile', headers: other.auth, payload: {} });
    assert.equal(problemOf(noCode).errors?.[0]?.path, '/email_code');
    const deleted = await inject({ method: 'DELETE', url: '/api/users/profile', headers: other.auth, payload: { email_code: deleteCode! } });
    assert.equal(deleted.statusCode, 204, deleted.body);
  });

  it(`signs in once when one right code is sent twice at once${onPostgres ? ' (PostgreSQL, concurrent connections)' : ''}`, async () => {
    const user = await createUser(testApp.app);
    const code = await requestCode(user.email);
    const replies = await Promise.all([signIn(user.email, code!), signIn(user.email, code!), signIn(user.email, code!)]);
    assert.deepEqual(replies.map((reply) => reply.statusCode).sort(), [200, 400, 400]);
    const sessions = await testApp.db.selectFrom('sessions').select('amr').where('user_id', '=', user.id).execute();
    assert.equal(sessions.filter((session) => session.amr.includes('email')).length, 1);
  });

  it(`makes one account when one new address's code is sent twice at once${onPostgres ? ' (PostgreSQL, concurrent connections)' : ''}`, async () => {
    const email = uniqueEmail('racing');
    const code = await requestCode(email);
    const replies = await Promise.all([signIn(email, code!), signIn(email, code!), signIn(email, code!)]);
    assert.deepEqual(replies.map((reply) => reply.statusCode).sort(), [200, 400, 400]);
    const accounts = await testApp.db.selectFrom('users').select('id').where(sql<string>`lower(email)`, '=', email.toLowerCase()).execute();
    assert.equal(accounts.length, 1);
  });
});

describe('email codes with sign-up by code closed', () => {
  for (const environment of [{ EMAIL_CODE_SIGNUP: 'false' }, { ALLOW_REGISTRATION: 'false' }] as Record<string, string>[]) {
    it(`sends no code to an unknown address, and still to a known one (${Object.entries(environment)[0]!.join('=')})`, async () => {
      const testApp = await buildTestApp({ environment });
      try {
        const known = uniqueEmail('known');
        await testApp.db
          .insertInto('users')
          .values({ id: crypto.randomUUID(), email: known, name: 'Known', phone: null, role: 'user', status: 'active', password_hash: null, email_verified: false, created_at: new Date(), updated_at: new Date() })
          .execute();
        const unknown = uniqueEmail('unknown');
        for (const email of [known, unknown]) {
          const reply = await testApp.app.inject({ method: 'POST', url: '/api/auth/email-code', payload: { email } });
          assert.equal(reply.statusCode, 202);
          assert.deepEqual(reply.json(), { status: 'accepted' });
        }
        const rowsOf = async (email: string) => (await testApp.db.selectFrom('email_codes').select('id').where('email', '=', email).execute()).length;
        for (let waited = 0; waited < 5_000 && (await rowsOf(known)) === 0; waited += 25) await new Promise((resolve) => setTimeout(resolve, 25));
        assert.equal(await rowsOf(known), 1);
        assert.equal(await rowsOf(unknown), 0);
        const mails = await testApp.db.selectFrom('email_outbox').select('to_address').execute();
        assert.deepEqual(mails.map((mail) => mail.to_address).filter((address) => address === known || address === unknown), [known]);
      } finally {
        await testApp.close();
      }
    });
  }
});
