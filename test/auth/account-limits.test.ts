import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { createAccountToken } from '../../src/users/account-token-repository.js';
import { SmtpCatcher } from '../helpers/smtp-catcher.js';
import { buildTestApp, createUser, problemOf, uniqueEmail, type Session, type TestApp } from '../helpers/test-app.js';

/** API.md sections 10 and 17: limits per account whatever the addresses, IPv6 by /64, re-authentication, and mail volume. */
describe('limits per account', () => {
  let testApp: TestApp;
  let catcher: SmtpCatcher;
  before(async () => {
    catcher = new SmtpCatcher();
    testApp = await buildTestApp({ environment: { SMTP_URL: await catcher.start(), LOGIN_ACCOUNT_FAILURE_LIMIT: '5', LOGIN_RATE_LIMIT: '4' } });
  });
  after(async () => {
    await testApp.close();
    await catcher.stop();
  });
  const inject = (request: InjectOptions) => testApp.app.inject(request);
  const login = (email: string, password: string, remoteAddress: string) => inject({ method: 'POST', url: '/api/auth/login', remoteAddress, payload: { email, password } });
  const mailsTo = async (address: string) => {
    await testApp.jobs.runNow('send-mail');
    return catcher.mails.filter((mail) => mail.to.includes(address));
  };

  it('refuses logins for an account after LOGIN_ACCOUNT_FAILURE_LIMIT failures in an hour from any addresses', async () => {
    const user = await createUser(testApp.app);
    for (let guess = 0; guess < 5; guess++) {
      assert.equal((await login(user.email, `guess-${guess}-wrong`, `127.0.0.${guess + 2}`)).statusCode, 401, `guess ${guess + 1}`);
    }
    const locked = await login(user.email, user.password, '127.0.0.9');
    assert.equal(locked.statusCode, 429, 'even the right password is refused while the account is locked');
    assert.equal(problemOf(locked).code, 'rate_limited');
    const retryAfter = Number(locked.headers['retry-after']);
    assert.ok(retryAfter > 3500 && retryAfter <= 3600, `Retry-After ${retryAfter}`);
    const unknown = uniqueEmail('nobody');
    for (let guess = 0; guess < 5; guess++) await login(unknown, 'whatever-it-is', `127.0.1.${guess + 2}`);
    assert.equal((await login(unknown, 'whatever-it-is', '127.0.1.9')).statusCode, 429, 'an unknown email is counted alike');
  });

  it('keeps counting after a successful login; a completed password reset starts afresh', async () => {
    const user = await createUser(testApp.app);
    for (let guess = 0; guess < 3; guess++) await login(user.email, 'wrong-password', `127.0.2.${guess + 2}`);
    assert.equal((await login(user.email, user.password, '127.0.2.8')).statusCode, 200);
    for (let guess = 0; guess < 2; guess++) await login(user.email, 'wrong-password', `127.0.3.${guess + 2}`);
    assert.equal((await login(user.email, user.password, '127.0.3.8')).statusCode, 429);
    const token = await createAccountToken(testApp.db, { userId: user.id, purpose: 'password_reset', email: user.email, ttlSeconds: 600 });
    const reset = await inject({ method: 'POST', url: '/api/auth/password-reset/confirm', payload: { token: token.value, new_password: 'fresh-password-1' } });
    assert.equal(reset.statusCode, 204);
    assert.equal((await login(user.email, 'fresh-password-1', '127.0.3.9')).statusCode, 200);
  });

  it('counts IPv6 clients by their /64, for logins and for requests without a token', async () => {
    const email = uniqueEmail('v6');
    const statuses = [];
    for (let host = 1; host <= 5; host++) statuses.push((await login(email, 'wrong-wrong', `2001:db8:aa:bb::${host}`)).statusCode);
    assert.deepEqual(statuses, [401, 401, 401, 401, 429], 'LOGIN_RATE_LIMIT=4 per /64 and email');
    assert.equal((await login(email, 'wrong-wrong', '2001:db8:aa:cc::1')).statusCode, 401, 'another /64 has its own budget');
  });

  /** API.md section 17: a password re-checked with an access token counts like a login. */
  const reauthentications = [
    {
      route: 'change-password',
      send: (user: Session, password: string, remoteAddress: string) =>
        inject({ method: 'PUT', url: '/api/users/change-password', headers: user.auth, remoteAddress, payload: { current_password: password, new_password: 'another-password-9' } }),
    },
    {
      route: 'an email change',
      send: (user: Session, password: string, remoteAddress: string) =>
        inject({ method: 'PATCH', url: '/api/users/profile', headers: user.auth, remoteAddress, payload: { email: uniqueEmail('moved'), current_password: password } }),
    },
    {
      route: 'self-deletion',
      send: (user: Session, password: string, remoteAddress: string) =>
        inject({ method: 'DELETE', url: '/api/users/profile', headers: user.auth, remoteAddress, payload: { password } }),
    },
  ];
  /** What a re-authentication could change: the user row, its sessions, its events. */
  const accountState = async (userId: string) => ({
    user: await testApp.db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirstOrThrow(),
    sessions: await testApp.db.selectFrom('sessions').select(['id', 'ended_at']).where('user_id', '=', userId).orderBy('id').execute(),
    events: await testApp.db.selectFrom('events').select(['id', 'type']).where('subject_id', '=', userId).orderBy('id').execute(),
  });

  for (const { route, send } of reauthentications) {
    it(`counts wrong passwords of ${route} toward LOGIN_ACCOUNT_FAILURE_LIMIT; past it the right one is 429 and nothing changes`, async () => {
      const user = await createUser(testApp.app);
      const before = await accountState(user.id);
      for (let guess = 0; guess < 5; guess++) {
        const wrong = await send(user, `guess-${guess}-wrong`, `127.0.5.${guess + 2}`);
        assert.equal(wrong.statusCode, 403, `guess ${guess + 1}`);
        assert.equal(problemOf(wrong).code, 'wrong_password');
      }
      const refused = await send(user, user.password, '127.0.5.9');
      assert.equal(refused.statusCode, 429, 'the right password is refused past the limit');
      assert.equal(problemOf(refused).code, 'rate_limited');
      const retryAfter = Number(refused.headers['retry-after']);
      assert.ok(retryAfter > 3500 && retryAfter <= 3600, `Retry-After ${retryAfter}`);
      assert.deepEqual(await accountState(user.id), before, 'nothing changed');
      assert.equal((await inject({ method: 'GET', url: '/api/users/profile', headers: user.auth })).statusCode, 200, 'the session lives on');
      const locked = await login(user.email, user.password, '127.0.5.10');
      assert.equal(locked.statusCode, 429, "the account's logins are refused too");
      assert.equal(problemOf(locked).code, 'rate_limited');
      assert.ok(Number(locked.headers['retry-after']) > 3500);
    });
  }

  it("spends re-authentications from the address's LOGIN_RATE_LIMIT, with the logins of that email", async () => {
    const user = await createUser(testApp.app);
    const address = '127.0.6.2';
    assert.equal((await login(user.email, 'wrong-password', address)).statusCode, 401);
    for (const { route, send } of reauthentications) assert.equal((await send(user, 'wrong-password', address)).statusCode, 403, route);
    const before = await accountState(user.id);
    for (const { route, send } of reauthentications) {
      const refused = await send(user, user.password, address);
      assert.equal(refused.statusCode, 429, `${route}: LOGIN_RATE_LIMIT=4 spent, the right password included`);
      assert.equal(problemOf(refused).code, 'rate_limited');
      const retryAfter = Number(refused.headers['retry-after']);
      assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
    }
    assert.deepEqual(await accountState(user.id), before, 'nothing changed');
    assert.equal((await login(user.email, user.password, address)).statusCode, 429, 'the login from that address shares the budget');
    assert.equal((await login(user.email, user.password, '127.0.6.3')).statusCode, 200, 'four failures, under the account limit: another address logs in');
  });

  it('mails at most 3 reset links an hour to one account, whatever the addresses asking; the reply stays 202', async () => {
    const user = await createUser(testApp.app);
    for (let request = 0; request < 5; request++) {
      const reply = await inject({ method: 'POST', url: '/api/auth/password-reset', remoteAddress: `127.0.4.${request + 2}`, payload: { email: user.email } });
      assert.equal(reply.statusCode, 202);
    }
    // The links are queued after each reply has gone; wait until the five requests were handled.
    const resetMails = async () => (await mailsTo(user.email)).filter((mail) => /reset-password/.test(mail.text)).length;
    for (const deadline = Date.now() + 10_000; (await resetMails()) < 3 && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 50));
    const tokens = await testApp.db.selectFrom('one_time_tokens').select('id').where('user_id', '=', user.id).where('purpose', '=', 'password_reset').execute();
    assert.equal(tokens.length, 3);
    assert.equal(await resetMails(), 3);
  });

  it('resends the live verification link, at most once a minute and 5 times a day (429 with Retry-After)', async () => {
    const user = await createUser(testApp.app);
    const resend = () => inject({ method: 'POST', url: '/api/auth/verify-email/resend', headers: user.auth });
    const linkOf = (text: string) => /token=([A-Za-z0-9_-]{43})/.exec(text)?.[1];
    const first = await resend();
    assert.equal(first.statusCode, 202);
    const tooSoon = await resend();
    assert.equal(tooSoon.statusCode, 429);
    assert.equal(problemOf(tooSoon).code, 'rate_limited');
    assert.ok(Number(tooSoon.headers['retry-after']) >= 1 && Number(tooSoon.headers['retry-after']) <= 60);
    const moveBack = (seconds: number) =>
      testApp.db.updateTable('account_attempts').set({ created_at: new Date(Date.now() - seconds * 1000) }).where('subject', '=', user.id).execute();
    for (let more = 0; more < 4; more++) {
      await moveBack(61);
      assert.equal((await resend()).statusCode, 202, `resend ${more + 2}`);
    }
    await moveBack(61);
    const sixth = await resend();
    assert.equal(sixth.statusCode, 429, 'five in 24 hours');
    assert.ok(Number(sixth.headers['retry-after']) > 60);
    const links = (await mailsTo(user.email)).map((mail) => linkOf(mail.text));
    assert.equal(links.length, 6, 'the registration mail and five resends');
    assert.equal(new Set(links).size, 1, 'every resend sent the same live link');
    const live = await testApp.db.selectFrom('one_time_tokens').select('id').where('user_id', '=', user.id).where('used_at', 'is', null).execute();
    assert.equal(live.length, 1, 'one live token');
  });
});
