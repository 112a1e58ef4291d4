import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { createAccountToken } from '../../src/users/account-token-repository.js';
import { SmtpCatcher } from '../helpers/smtp-catcher.js';
import { buildTestApp, createUser, problemOf, uniqueEmail, type Session, type TestApp } from '../helpers/test-app.js';

/** API.md section 10, "Email changes": a stolen access token alone cannot move the account's address. */
describe('changing the email address', () => {
  let testApp: TestApp;
  let catcher: SmtpCatcher;
  before(async () => {
    catcher = new SmtpCatcher();
    testApp = await buildTestApp({ environment: { SMTP_URL: await catcher.start() } });
  });
  after(async () => {
    await testApp.close();
    await catcher.stop();
  });
  const inject = (request: InjectOptions) => testApp.app.inject(request);
  const profileOf = async (user: Session) => (await inject({ method: 'GET', url: '/api/users/profile', headers: user.auth })).json();
  const mailsTo = async (address: string) => {
    await testApp.jobs.runNow('send-mail');
    return catcher.mails.filter((mail) => mail.to.includes(address));
  };

  it('needs current_password: without it 400 naming it, wrong 403 wrong_password, and nothing changes', async () => {
    const user = await createUser(testApp.app);
    const target = uniqueEmail('attacker');
    for (const method of ['PATCH', 'PUT'] as const) {
      const payload = method === 'PUT' ? { name: 'Test User', email: target } : { email: target };
      const missing = await inject({ method, url: '/api/users/profile', headers: user.auth, payload });
      assert.equal(missing.statusCode, 400);
      assert.equal(problemOf(missing).code, 'validation_failed');
      assert.deepEqual(problemOf(missing).errors?.map((error) => error.path), ['/current_password']);
      const wrong = await inject({ method, url: '/api/users/profile', headers: user.auth, payload: { ...payload, current_password: 'not-the-password' } });
      assert.equal(wrong.statusCode, 403);
      assert.equal(problemOf(wrong).code, 'wrong_password');
    }
    const profile = await profileOf(user);
    assert.equal(profile.email, user.email);
    assert.equal(profile.version, 1);
    assert.equal((await mailsTo(target)).length, 0, 'no mail to the address the attacker chose');
  });

  it('counts a change of letter case alone as a change', async () => {
    const user = await createUser(testApp.app);
    const shouted = await inject({ method: 'PATCH', url: '/api/users/profile', headers: user.auth, payload: { email: user.email.toUpperCase() } });
    assert.equal(problemOf(shouted).code, 'validation_failed');
    const allowed = await inject({ method: 'PATCH', url: '/api/users/profile', headers: user.auth, payload: { email: user.email.toUpperCase(), current_password: user.password } });
    assert.equal(allowed.statusCode, 200);
    assert.equal(allowed.json().email, user.email.toUpperCase());
    assert.equal(allowed.json().email_verified, false);
  });

  it('checks a current_password sent with a body that keeps the email', async () => {
    const user = await createUser(testApp.app);
    const wrong = await inject({ method: 'PATCH', url: '/api/users/profile', headers: user.auth, payload: { name: 'Renamed', current_password: 'nope-nope-nope' } });
    assert.equal(problemOf(wrong).code, 'wrong_password');
    const right = await inject({ method: 'PATCH', url: '/api/users/profile', headers: user.auth, payload: { name: 'Renamed', current_password: user.password } });
    assert.equal(right.statusCode, 200);
    assert.equal(right.json().name, 'Renamed');
    const withoutPassword = await inject({ method: 'PATCH', url: '/api/users/profile', headers: user.auth, payload: { name: 'Again' } });
    assert.equal(withoutPassword.statusCode, 200, 'a change that keeps the email needs no password');
  });

  it('tells the old address (without a link), mails the new one a link, and spends reset links', async () => {
    const user = await createUser(testApp.app);
    const reset = await createAccountToken(testApp.db, { userId: user.id, purpose: 'password_reset', email: user.email, ttlSeconds: 600 });
    const next = uniqueEmail('moved');
    const changed = await inject({ method: 'PUT', url: '/api/users/profile', headers: user.auth, payload: { name: 'Moved', email: next, current_password: user.password } });
    assert.equal(changed.statusCode, 200);
    const notice = (await mailsTo(user.email)).find((mail) => /email address was changed/i.test(mail.text));
    assert.ok(notice, 'the old address got a notice');
    assert.match(notice.text, new RegExp(next.replace(/[.]/g, '\\.')));
    assert.doesNotMatch(notice.text, /https?:\/\//, 'the notice carries no link');
    assert.ok((await mailsTo(next)).some((mail) => /token=/.test(mail.text)), 'the new address got a verification link');
    const spent = await inject({ method: 'POST', url: '/api/auth/password-reset/confirm', payload: { token: reset.value, new_password: 'taken-over-1' } });
    assert.equal(problemOf(spent).code, 'invalid_reset_token', 'a reset link sent before the change no longer works');
  });

  it('allows 5 email changes in 24 hours (429 with Retry-After beyond); refused attempts do not count', async () => {
    const user = await createUser(testApp.app);
    for (let change = 0; change < 5; change++) {
      await inject({ method: 'PATCH', url: '/api/users/profile', headers: user.auth, payload: { email: uniqueEmail('x'), current_password: 'wrong-password' } });
      const ok = await inject({ method: 'PATCH', url: '/api/users/profile', headers: user.auth, payload: { email: uniqueEmail('move'), current_password: user.password } });
      assert.equal(ok.statusCode, 200, `change ${change + 1}`);
    }
    const sixth = await inject({ method: 'PATCH', url: '/api/users/profile', headers: user.auth, payload: { email: uniqueEmail('move'), current_password: user.password } });
    assert.equal(sixth.statusCode, 429);
    assert.equal(problemOf(sixth).code, 'rate_limited');
    const retryAfter = Number(sixth.headers['retry-after']);
    assert.ok(retryAfter > 86_000 && retryAfter <= 86_400, `Retry-After ${retryAfter}`);
    assert.equal((await profileOf(user)).version, 6, 'the refused change changed nothing');
    // A day later (the rows' times move; nobody sleeps) the account may change again.
    await testApp.db.updateTable('account_attempts').set({ created_at: new Date(Date.now() - 86_401_000) }).where('subject', '=', user.id).execute();
    const later = await inject({ method: 'PATCH', url: '/api/users/profile', headers: user.auth, payload: { email: uniqueEmail('move'), current_password: user.password } });
    assert.equal(later.statusCode, 200);
  });
});
