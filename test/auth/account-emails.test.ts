import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { createAccountToken } from '../../src/users/account-token-repository.js';
import { SmtpCatcher } from '../helpers/smtp-catcher.js';
import { buildTestApp, createUser, login, loginAdmin, problemOf, uniqueEmail, type TestApp } from '../helpers/test-app.js';

/** Waits for the mail loop to hand a message to the SMTP server, with a deadline. */
async function tokenFrom(catcher: SmtpCatcher, address: string, path: string): Promise<string> {
  for (let waited = 0; waited < 15_000; waited += 50) {
    const token = catcher.tokenFor(address, path);
    if (token) return token;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no mail to ${address} with ${path}`);
}

describe('password reset and email verification, through a real SMTP server', () => {
  let testApp: TestApp;
  let catcher: SmtpCatcher;
  before(async () => {
    catcher = new SmtpCatcher();
    const smtpUrl = await catcher.start();
    testApp = await buildTestApp({ environment: { SMTP_URL: smtpUrl, PUBLIC_URL: 'https://shop.example', LOGIN_RATE_LIMIT: '5' } });
  });
  after(async () => {
    await testApp.close();
    await catcher.stop();
  });
  const inject = (request: InjectOptions) => testApp.app.inject(request);

  it('registers unverified, mails a verification link, and verifies once', async () => {
    const email = uniqueEmail();
    const registered = await inject({ method: 'POST', url: '/api/auth/register', payload: { email, password: 'password-123', name: 'Vera' } });
    assert.equal(registered.json().email_verified, false);
    const token = await tokenFrom(catcher, email, 'https://shop.example/admin/#/verify-email');
    const mail = catcher.mails.find((candidate) => candidate.to.includes(email))!;
    assert.match(mail.raw, /Content-Type: text\/plain/);
    assert.match(mail.raw, /Content-Type: text\/html/);
    assert.equal((await inject({ method: 'POST', url: '/api/auth/verify-email', payload: { token } })).statusCode, 204);
    const user = await login(testApp.app, email, 'password-123');
    const profile = await inject({ method: 'GET', url: '/api/users/profile', headers: user.auth });
    assert.equal(profile.json().email_verified, true);
    assert.equal(profile.json().version, 2, 'verification moves the version');
    const again = await inject({ method: 'POST', url: '/api/auth/verify-email', payload: { token } });
    assert.equal(again.statusCode, 400);
    assert.equal(problemOf(again).code, 'invalid_verification_token');
    const before = catcher.mails.length;
    assert.equal((await inject({ method: 'POST', url: '/api/auth/verify-email/resend', headers: user.auth })).statusCode, 202);
    await testApp.jobs.runNow('send-mail');
    assert.equal(catcher.mails.length, before, 'no mail when the address is verified');
    const events = await testApp.db.selectFrom('events').select('type').where('subject_id', '=', user.id).where('type', '=', 'user.email_verified').execute();
    assert.equal(events.length, 1);
  });

  it("lets an admin resend a user's verification link (none once verified; 404, 403 for others)", async () => {
    const admin = await loginAdmin(testApp.app);
    const user = await createUser(testApp.app);
    await tokenFrom(catcher, user.email, '/verify-email');
    const resend = (id: string, auth = admin.auth) => inject({ method: 'POST', url: `/api/users/${id}/verify-email/resend`, headers: auth });
    assert.equal((await resend(user.id, user.auth)).statusCode, 403);
    assert.equal((await resend('00000000-0000-4000-8000-000000000000')).statusCode, 404);
    const mailsTo = () => catcher.mails.filter((mail) => mail.to.includes(user.email)).length;
    const before = mailsTo();
    const accepted = await resend(user.id);
    assert.equal(accepted.statusCode, 202);
    assert.deepEqual(accepted.json(), { status: 'accepted' });
    const token = await (async () => {
      for (let waited = 0; waited < 15_000 && mailsTo() === before; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
      return catcher.tokenFor(user.email, '/verify-email');
    })();
    assert.equal(mailsTo(), before + 1, 'a second link went out');
    assert.equal((await inject({ method: 'POST', url: '/api/auth/verify-email', payload: { token } })).statusCode, 204);
    // A minute later (the resend limit allows one a minute): the rows' times move, nobody sleeps.
    await testApp.db.updateTable('account_attempts').set({ created_at: new Date(Date.now() - 120_000) }).where('subject', '=', user.id).execute();
    assert.equal((await resend(user.id)).statusCode, 202);
    await testApp.jobs.runNow('send-mail');
    assert.equal(mailsTo(), before + 1, 'no mail once verified');
  });

  it('voids a verification link when the email changes, and mails the new address', async () => {
    const user = await createUser(testApp.app);
    const oldToken = await tokenFrom(catcher, user.email, '/verify-email');
    const newEmail = uniqueEmail('moved');
    const changed = await inject({ method: 'PATCH', url: '/api/users/profile', headers: user.auth, payload: { email: newEmail, current_password: user.password } });
    assert.equal(changed.json().email_verified, false);
    const stale = await inject({ method: 'POST', url: '/api/auth/verify-email', payload: { token: oldToken } });
    assert.equal(problemOf(stale).code, 'invalid_verification_token', 'the link for the old address no longer works');
    const newToken = await tokenFrom(catcher, newEmail, '/verify-email');
    assert.equal((await inject({ method: 'POST', url: '/api/auth/verify-email', payload: { token: newToken } })).statusCode, 204);
  });

  it('answers a reset request the same for known and unknown emails, and mails only the known one', async () => {
    const user = await createUser(testApp.app);
    const known = await inject({ method: 'POST', url: '/api/auth/password-reset', payload: { email: user.email } });
    const unknownEmail = uniqueEmail('nobody');
    const unknown = await inject({ method: 'POST', url: '/api/auth/password-reset', payload: { email: unknownEmail } });
    assert.equal(known.statusCode, 202);
    assert.equal(unknown.statusCode, 202);
    assert.equal(known.body, unknown.body);
    await tokenFrom(catcher, user.email, '/reset-password');
    await testApp.jobs.runNow('send-mail');
    assert.equal(catcher.mails.some((mail) => mail.to.includes(unknownEmail)), false);
  });

  it('resets the password with the emailed link: every session ends and every other link is spent', async () => {
    const user = await createUser(testApp.app);
    await inject({ method: 'POST', url: '/api/auth/password-reset', payload: { email: user.email } });
    const first = await tokenFrom(catcher, user.email, '/reset-password');
    await inject({ method: 'POST', url: '/api/auth/password-reset', payload: { email: user.email.toUpperCase() } });
    let second = first;
    for (let waited = 0; second === first && waited < 15_000; waited += 50) {
      second = catcher.tokenFor(user.email, '/reset-password') ?? first;
      if (second === first) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.notEqual(second, first);
    const reset = await inject({ method: 'POST', url: '/api/auth/password-reset/confirm', payload: { token: second, new_password: 'reset-password-1' } });
    assert.equal(reset.statusCode, 204);
    assert.equal((await inject({ method: 'GET', url: '/api/users/profile', headers: user.auth })).statusCode, 401, 'sessions ended');
    assert.equal((await inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: user.refreshToken } })).statusCode, 401);
    const spent = await inject({ method: 'POST', url: '/api/auth/password-reset/confirm', payload: { token: first, new_password: 'reset-password-2' } });
    assert.equal(problemOf(spent).code, 'invalid_reset_token', 'the other outstanding link was spent too');
    assert.equal((await inject({ method: 'POST', url: '/api/auth/login', payload: { email: user.email, password: 'reset-password-1' } })).statusCode, 200);
    const bogus = await inject({ method: 'POST', url: '/api/auth/password-reset/confirm', payload: { token: 'x'.repeat(43), new_password: 'reset-password-3' } });
    assert.equal(problemOf(bogus).code, 'invalid_reset_token');
    const event = await testApp.db.selectFrom('events').selectAll().where('subject_id', '=', user.id).where('type', '=', 'user.password_reset').executeTakeFirstOrThrow();
    assert.doesNotMatch(JSON.stringify(event.data), /token|password/i);
  });

  it('spends reset links on a password change and on a suspension, not only on a reset', async () => {
    const admin = await loginAdmin(testApp.app);
    const confirm = (token: string) => inject({ method: 'POST', url: '/api/auth/password-reset/confirm', payload: { token, new_password: 'taken-over-1' } });
    const changer = await createUser(testApp.app);
    const beforeChange = await createAccountToken(testApp.db, { userId: changer.id, purpose: 'password_reset', email: changer.email, ttlSeconds: 600 });
    const changed = await inject({ method: 'PUT', url: '/api/users/change-password', headers: changer.auth, payload: { current_password: changer.password, new_password: 'changed-password-1' } });
    assert.equal(changed.statusCode, 200);
    assert.equal(problemOf(await confirm(beforeChange.value)).code, 'invalid_reset_token', 'after a password change');
    const suspended = await createUser(testApp.app);
    const beforeSuspension = await createAccountToken(testApp.db, { userId: suspended.id, purpose: 'password_reset', email: suspended.email, ttlSeconds: 600 });
    await inject({ method: 'PUT', url: `/api/users/${suspended.id}/status`, headers: admin.auth, payload: { status: 'suspended' } });
    await inject({ method: 'PUT', url: `/api/users/${suspended.id}/status`, headers: admin.auth, payload: { status: 'active' } });
    assert.equal(problemOf(await confirm(beforeSuspension.value)).code, 'invalid_reset_token', 'after a suspension');
  });

  it('rate-limits reset requests per address and email (LOGIN_RATE_LIMIT, 5 here)', async () => {
    const email = uniqueEmail();
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await inject({ method: 'POST', url: '/api/auth/password-reset', remoteAddress: '10.9.9.9', payload: { email } })).statusCode);
    assert.deepEqual(statuses, [202, 202, 202, 202, 202, 429]);
  });

  it('starts the first admin verified', async () => {
    const admin = await loginAdmin(testApp.app);
    assert.equal((await inject({ method: 'GET', url: '/api/users/profile', headers: admin.auth })).json().email_verified, true);
  });
});

describe('without SMTP_URL', () => {
  it('keeps mails queued and warns once at start', async () => {
    const logLines: string[] = [];
    const testApp = await buildTestApp({ logLines });
    try {
      await testApp.app.inject({ method: 'POST', url: '/api/auth/register', payload: { email: uniqueEmail(), password: 'password-123', name: 'Q' } });
      const queued = await testApp.db.selectFrom('email_outbox').select(['status', 'attempts']).execute();
      assert.deepEqual(queued, [{ status: 'pending', attempts: 0 }]);
      assert.equal(logLines.filter((line) => line.includes('SMTP_URL is not set')).length, 1);
      assert.ok(!logLines.join('\n').includes('token='), 'no link reaches the log');
    } finally {
      await testApp.close();
    }
  });
});
