import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { eventually } from '../helpers/eventually.js';
import { SmtpCatcher } from '../helpers/smtp-catcher.js';
import { SoftwareAuthenticator } from '../helpers/software-authenticator.js';
import { buildTestApp, createUser, login, loginAdmin, onPostgres, problemOf, type Session, type TestApp } from '../helpers/test-app.js';
import type { TotpDevice } from '../helpers/totp-device.js';
import { enrolTotp, firstStep } from './mfa-helpers.js';

const PUBLIC_URL = 'https://shop.example.com';
const LOCK_SUBJECT = 'Second-factor checks of your account are locked';
/**
 * The account's own limit (LOGIN_ACCOUNT_FAILURE_LIMIT, 20 wrong codes or passwords an hour) is
 * set out of the way here: these tests send more wrong codes in an hour than it allows, to see
 * the second-factor lock alone (the account limit has account-limits.test.ts and totp.test.ts).
 */
const ENVIRONMENT = { PUBLIC_URL, LOGIN_ACCOUNT_FAILURE_LIMIT: '100000' };

const stepUp = (app: FastifyInstance, user: Session, payload: Record<string, unknown>, remoteAddress?: string) =>
  app.inject({ method: 'POST', url: '/api/auth/mfa/verify', headers: user.auth, payload, ...(remoteAddress ? { remoteAddress } : {}) });

const secondStep = (app: FastifyInstance, mfaToken: string, payload: Record<string, unknown>, remoteAddress?: string) =>
  app.inject({ method: 'POST', url: '/api/auth/login/mfa', payload: { mfa_token: mfaToken, ...payload }, ...(remoteAddress ? { remoteAddress } : {}) });

/** `count` wrong TOTP codes at logins' second steps (a new login each 5, as the 5th kills an mfa_token), each 400 `invalid_mfa_code`. */
async function wrongAtLogins(app: FastifyInstance, user: Session, device: TotpDevice, count: number, remoteAddress?: string) {
  let mfaToken = '';
  for (let sent = 0; sent < count; sent++) {
    if (sent % 5 === 0) mfaToken = (await firstStep(app, user.email, user.password)).mfaToken;
    const reply = await secondStep(app, mfaToken, { code: device.wrong() }, remoteAddress);
    assert.equal(problemOf(reply).code, 'invalid_mfa_code', `wrong code ${sent + 1} at a login: ${reply.body}`);
  }
}

/** `count` wrong proofs at step-up, each 400 `invalid_mfa_code`. */
async function wrongAtStepUps(app: FastifyInstance, user: Session, payload: () => Record<string, unknown>, count: number, remoteAddress?: string) {
  for (let sent = 0; sent < count; sent++) {
    const reply = await stepUp(app, user, payload(), remoteAddress);
    assert.equal(problemOf(reply).code, 'invalid_mfa_code', `wrong proof ${sent + 1} at step-up: ${reply.body}`);
  }
}

/** A 429 of the lock, with its Retry-After in seconds. */
function lockedFor(reply: LightMyRequestResponse): number {
  assert.equal(reply.statusCode, 429, reply.body);
  assert.equal(problemOf(reply).code, 'rate_limited');
  const seconds = Number(reply.headers['retry-after']);
  assert.ok(Number.isInteger(seconds) && seconds > 0, `Retry-After: ${reply.headers['retry-after']}`);
  return seconds;
}

const assertAbout = (actual: number, expected: number, what: string) => assert.ok(actual <= expected && actual >= expected - 10, `${what}: ${actual}, not about ${expected}`);

/** API.md section 17, "Second-factor attempts": wrong codes in a row lock a user's second-factor checks. */
describe('second factors: the lock after MFA_FAILURE_LIMIT wrong codes in a row', () => {
  let testApp: TestApp;
  let catcher: SmtpCatcher;
  before(async () => {
    catcher = new SmtpCatcher();
    testApp = await buildTestApp({ environment: { ...ENVIRONMENT, SMTP_URL: await catcher.start() } });
  });
  after(async () => {
    await testApp.close();
    await catcher.stop();
  });

  /** The lock notices the SMTP server got for `email`, once the outbox has been sent. */
  async function lockMails(email: string) {
    await testApp.jobs.runNow('send-mail');
    return catcher.mails.filter((mail) => mail.to.includes(email) && mail.text.includes(LOCK_SUBJECT));
  }

  /** Moves the lock's end into the past, as time would. */
  const endLock = (userId: string) =>
    testApp.db.updateTable('mfa_failure_locks').set({ locked_until: new Date(Date.now() - 1000) }).where('user_id', '=', userId).execute();

  it('answers the wrong codes 400, then every check 429 with Retry-After for 15 minutes, the right code included, and mails the user once', async () => {
    const { app, db } = testApp;
    const user = await createUser(app);
    const { device, factor } = await enrolTotp(app, user);
    await wrongAtLogins(app, user, device, 9);
    assert.equal((await lockMails(user.email)).length, 0, 'no lock before the 10th');
    // The 10th wrong one, a recovery code: answered as usual.
    const { mfaToken } = await firstStep(app, user.email, user.password);
    assert.equal(problemOf(await secondStep(app, mfaToken, { recovery_code: 'aaaa-bbbb-cccc-dddd' })).code, 'invalid_mfa_code');

    // The right code (a locked check marks nothing, so it stays right for the step-up after it).
    const code = device.next();
    assertAbout(lockedFor(await secondStep(app, mfaToken, { code })), 900, 'Retry-After of the first lock');
    assertAbout(lockedFor(await stepUp(app, user, { code })), 900, 'step-up is locked too');
    lockedFor(await secondStep(app, mfaToken, { recovery_code: factor.recovery_codes![0] }));
    lockedFor(await stepUp(app, user, { code: device.wrong() }));
    assert.equal((await app.inject({ method: 'GET', url: '/api/auth/mfa', headers: user.auth })).json().recovery_codes_left, 10, 'a locked check spends no recovery code');

    const state = await db.selectFrom('mfa_failure_locks').selectAll().where('user_id', '=', user.id).executeTakeFirstOrThrow();
    assert.equal(state.locks, 1);
    assert.equal(state.failures, 0, 'the count starts again after a lock');
    assertAbout(Math.round((state.locked_until!.getTime() - Date.now()) / 1000), 900, 'the stored end');
    const failedLogins = await db.selectFrom('account_attempts').select('id').where('kind', '=', 'login_failure').where('subject', '=', user.email.toLowerCase()).execute();
    assert.equal(failedLogins.length, 10, 'the wrong codes count as failed logins; the refused checks do not');

    const mails = await eventually(async () => ((await lockMails(user.email)).length > 0 ? lockMails(user.email) : undefined), 'the lock notice');
    assert.equal(mails.length, 1, 'one notice for the lock, however many checks it refused');
    assert.match(mails[0]!.text, /locked until \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/);
    assert.match(mails[0]!.text, /If it was not you/);

    // Once the lock is over, the mfa_token the 429s did not count or spend still works.
    await endLock(user.id);
    assert.equal((await secondStep(app, mfaToken, { code: device.next() })).statusCode, 200);
    assert.equal((await lockMails(user.email)).length, 1, 'still one notice');
  });

  it("leaves the login's password step open while the second factor is locked", async () => {
    const { app } = testApp;
    const user = await createUser(app);
    const { device } = await enrolTotp(app, user);
    await wrongAtLogins(app, user, device, 10);
    const first = await firstStep(app, user.email, user.password);
    assert.equal(problemOf(first.reply).code, 'mfa_required', 'the right password still gets its mfa_token');
    assert.deepEqual(first.methods, ['totp', 'recovery_code']);
    assertAbout(lockedFor(await secondStep(app, first.mfaToken, { code: device.next() })), 900, 'the second step waits for the lock');
    assert.equal(problemOf(await app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: user.email, password: 'wrong-password' } })).code, 'invalid_credentials', 'a wrong password is the plain 401');
  });

  it('counts wrong codes of one user across logins, step-ups and addresses; a right code before the lock starts the count afresh', async () => {
    const { app, db } = testApp;
    const user = await createUser(app);
    const { device } = await enrolTotp(app, user);
    const other = await createUser(app);
    const otherFactor = await enrolTotp(app, other);

    // 9 wrong, then the right one: no lock, and the count is 0 again.
    await wrongAtLogins(app, user, device, 5, '192.0.2.1');
    await wrongAtStepUps(app, user, () => ({ code: device.wrong() }), 4, '198.51.100.7');
    assert.equal((await stepUp(app, user, { code: device.next() })).statusCode, 200);
    assert.equal((await db.selectFrom('mfa_failure_locks').select('failures').where('user_id', '=', user.id).executeTakeFirstOrThrow()).failures, 0);
    // Another user's wrong codes are that user's own.
    await wrongAtStepUps(app, other, () => ({ code: otherFactor.device.wrong() }), 9);

    // 9 more wrong (from two addresses, logins and step-ups): still no lock.
    await wrongAtStepUps(app, user, () => ({ recovery_code: 'zzzz-zzzz-zzzz-zzzz' }), 4, '192.0.2.1');
    await wrongAtLogins(app, user, device, 5, '2001:db8::1');
    const { mfaToken } = await firstStep(app, user.email, user.password);
    assert.equal((await secondStep(app, mfaToken, { code: device.next() })).statusCode, 200, '9 in a row, then right: no lock');

    // 10 in a row, split between a login and step-ups: every check is locked, from any address.
    await wrongAtLogins(app, user, device, 3, '203.0.113.9');
    await wrongAtStepUps(app, user, () => ({ code: device.wrong() }), 7, '192.0.2.44');
    // Any code now, right or wrong (the first test sends the right one).
    const code = device.wrong();
    lockedFor(await stepUp(app, user, { code }, '198.51.100.200'));
    const again = await firstStep(app, user.email, user.password);
    lockedFor(await secondStep(app, again.mfaToken, { code }, '2001:db8:ffff::1'));

    // The other user, at 9, is not locked: its right code passes.
    assert.equal((await stepUp(app, other, { code: otherFactor.device.next() })).statusCode, 200);
  });

  it('doubles the lock at each further one, up to 24 hours, with a notice each time; a right code between does not undo it, a day without a lock does', async () => {
    const { app, db } = testApp;
    const user = await createUser(app);
    const { device } = await enrolTotp(app, user);
    await wrongAtStepUps(app, user, () => ({ code: device.wrong() }), 10);
    assertAbout(lockedFor(await stepUp(app, user, { code: device.next() })), 900, 'the first lock');

    await endLock(user.id);
    await wrongAtStepUps(app, user, () => ({ code: device.wrong() }), 10);
    assertAbout(lockedFor(await stepUp(app, user, { code: device.wrong() })), 1800, 'the second lock, twice the first');

    await endLock(user.id);
    assert.equal((await stepUp(app, user, { code: device.next() })).statusCode, 200, 'the lock over, the right code passes');
    await wrongAtLogins(app, user, device, 10);
    assertAbout(lockedFor(await stepUp(app, user, { code: device.wrong() })), 3600, 'the third lock: a right code between does not undo the doubling');

    // The last lock ended more than a day ago: the next one is a first one again.
    await db.updateTable('mfa_failure_locks').set({ locked_until: new Date(Date.now() - 25 * 3600_000) }).where('user_id', '=', user.id).execute();
    await wrongAtStepUps(app, user, () => ({ code: device.wrong() }), 10);
    assertAbout(lockedFor(await stepUp(app, user, { code: device.wrong() })), 900, 'a day without a lock: a first lock again');

    // After the 7th lock a doubled lock would pass 24 hours: it lasts 24 hours.
    await db.updateTable('mfa_failure_locks').set({ locks: 7, locked_until: new Date(Date.now() - 1000) }).where('user_id', '=', user.id).execute();
    await wrongAtStepUps(app, user, () => ({ code: device.wrong() }), 10);
    assertAbout(lockedFor(await stepUp(app, user, { code: device.wrong() })), 86_400, 'at most 24 hours');

    const mails = await eventually(async () => {
      const caught = await lockMails(user.email);
      return caught.length >= 5 ? caught : undefined;
    }, 'five lock notices');
    assert.equal(mails.length, 5, 'one notice per lock');
  });

  it("starts unlocked after an admin's reset of the user's factors", async () => {
    const { app, db } = testApp;
    const user = await createUser(app);
    const { device } = await enrolTotp(app, user);
    await wrongAtStepUps(app, user, () => ({ code: device.wrong() }), 10);
    lockedFor(await stepUp(app, user, { code: device.next() }));
    const admin = await loginAdmin(app);
    assert.equal((await app.inject({ method: 'DELETE', url: `/api/users/${user.id}/mfa`, headers: admin.auth })).statusCode, 204);
    assert.equal(await db.selectFrom('mfa_failure_locks').select('user_id').where('user_id', '=', user.id).executeTakeFirst(), undefined, 'the count and locks went with the factors');
    const back = await login(app, user.email, user.password);
    const fresh = await enrolTotp(app, back, 'New phone');
    assert.equal((await stepUp(app, back, { code: fresh.device.next() })).statusCode, 200, 'the new factor is not locked');
  });

  it('counts wrong passkey assertions alike, and spends the challenge of an assertion sent while locked', async () => {
    const { app } = testApp;
    const user = await createUser(app);
    const authenticator = new SoftwareAuthenticator(PUBLIC_URL, 'shop.example.com');
    const creation = (await app.inject({ method: 'POST', url: '/api/auth/mfa/webauthn/registration-options', headers: user.auth })).json();
    assert.equal((await app.inject({ method: 'POST', url: '/api/auth/mfa/webauthn', headers: user.auth, payload: { response: authenticator.register(creation) } })).statusCode, 201);
    const options = async () => {
      const reply = await app.inject({ method: 'POST', url: '/api/auth/mfa/webauthn/authentication-options', headers: user.auth });
      assert.equal(reply.statusCode, 200, reply.body);
      return reply.json();
    };
    for (let sent = 0; sent < 10; sent++) {
      const reply = await stepUp(app, user, { webauthn: authenticator.assert(await options(), { tamper: true }) });
      assert.equal(problemOf(reply).code, 'invalid_mfa_code', `tampered assertion ${sent + 1}`);
    }
    const request = await options();
    assertAbout(lockedFor(await stepUp(app, user, { webauthn: authenticator.assert(request) })), 900, 'a good assertion while locked');
    await testApp.db.updateTable('mfa_failure_locks').set({ locked_until: new Date(Date.now() - 1000) }).where('user_id', '=', user.id).execute();
    assert.equal(problemOf(await stepUp(app, user, { webauthn: authenticator.assert(request) })).code, 'invalid_mfa_code', 'its challenge was spent');
    assert.equal((await stepUp(app, user, { webauthn: authenticator.assert(await options()) })).statusCode, 200);
  });
});

/**
 * The same on two instances over one PostgreSQL: wrong codes sent at once, to both, are all
 * counted, and the user's checks lock once, with one notice.
 */
describe('second factors: the lock under concurrency (PostgreSQL, two instances)', { skip: !onPostgres && 'races need PostgreSQL' }, () => {
  let first: TestApp;
  let second: TestApp;
  let catcher: SmtpCatcher;
  before(async () => {
    catcher = new SmtpCatcher();
    const environment = { ...ENVIRONMENT, SMTP_URL: await catcher.start() };
    first = await buildTestApp({ environment });
    second = await buildTestApp({ environment, databaseUrl: first.databaseUrl! });
  });
  after(async () => {
    await second?.app.close();
    await first?.close();
    await catcher?.stop();
  });

  it('many wrong codes at once, logins and step-ups on both instances: exactly 10 answered 400, the rest 429, one lock, one email', async () => {
    const apps = [first.app, second.app];
    for (let round = 0; round < 3; round++) {
      const user = await createUser(first.app);
      const { device } = await enrolTotp(first.app, user);
      const tokens: string[] = [];
      for (let index = 0; index < 6; index++) tokens.push((await firstStep(apps[index % 2]!, user.email, user.password)).mfaToken);
      const wrong = device.wrong();
      const replies = await Promise.all([
        ...Array.from({ length: 24 }, (_, index) => stepUp(apps[index % 2]!, user, { code: wrong })),
        ...tokens.map((mfaToken, index) => secondStep(apps[index % 2]!, mfaToken, { code: wrong })),
      ]);
      const statuses = replies.map((reply) => reply.statusCode);
      assert.equal(statuses.filter((status) => status === 400).length, 10, `round ${round}: ${statuses.join(' ')}`);
      assert.equal(statuses.filter((status) => status === 429).length, 20, `round ${round}: ${statuses.join(' ')}`);
      for (const reply of replies) assert.equal(problemOf(reply).code, reply.statusCode === 400 ? 'invalid_mfa_code' : 'rate_limited');

      const state = await first.db.selectFrom('mfa_failure_locks').selectAll().where('user_id', '=', user.id).executeTakeFirstOrThrow();
      assert.equal(state.locks, 1, `round ${round}: one lock`);
      assert.equal(state.failures, 0);
      const queued = await first.db.selectFrom('email_outbox').select('id').where('to_address', '=', user.email).where('subject', '=', LOCK_SUBJECT).execute();
      assert.equal(queued.length, 1, `round ${round}: one notice queued`);
      await Promise.all([first, second].map((instance) => instance.jobs.runNow('send-mail')));
      const caught = await eventually(() => {
        const mails = catcher.mails.filter((mail) => mail.to.includes(user.email) && mail.text.includes(LOCK_SUBJECT));
        return mails.length > 0 ? mails : undefined;
      }, 'the lock notice');
      await Promise.all([first, second].map((instance) => instance.jobs.runNow('send-mail')));
      assert.equal(caught.length, 1, `round ${round}: one email`);
      assert.equal(catcher.mails.filter((mail) => mail.to.includes(user.email) && mail.text.includes(LOCK_SUBJECT)).length, 1);
    }
  });
});
