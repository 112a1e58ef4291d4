import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { createUser, onPostgres, useTwoInstancesWithAdmin, type Session } from '../helpers/test-app.js';
import { TotpDevice } from '../helpers/totp-device.js';
import { bearer, enrolTotp, firstStep } from './mfa-helpers.js';

const ROUNDS = 4;
const LOGINS = 5;

/**
 * API.md sections 10 and 12 under concurrency, on two instances over one PostgreSQL: a login's
 * second step racing a reset or a factor removal leaves no session that outlives the change; a
 * code or recovery code is accepted once however many requests carry it; two factors confirmed
 * at once make one set of recovery codes.
 */
describe('second factors under concurrency (PostgreSQL, two instances)', { skip: !onPostgres && 'races need PostgreSQL' }, () => {
  const fixture = useTwoInstancesWithAdmin();
  const apps = (): FastifyInstance[] => [fixture.first.app, fixture.second.app];

  /** A user with a factor and LOGINS logins waiting for their second step, each with a recovery code of its own. */
  async function pendingLogins(round: number) {
    const user = await createUser(fixture.first.app, { name: `Racer ${round}` });
    const { factor } = await enrolTotp(fixture.first.app, user);
    const tokens: string[] = [];
    for (let index = 0; index < LOGINS; index++) tokens.push((await firstStep(apps()[index % 2]!, user.email, user.password)).mfaToken);
    const secondSteps = () => tokens.map((mfaToken, index) => apps()[index % 2]!.inject({ method: 'POST', url: '/api/auth/login/mfa', payload: { mfa_token: mfaToken, recovery_code: factor.recovery_codes![index] } }));
    return { user, factor, secondSteps };
  }

  /** The racing logins that got tokens whose session still works: none may. */
  async function survivors(logins: LightMyRequestResponse[]): Promise<{ started: number; surviving: number }> {
    let started = 0;
    let surviving = 0;
    for (const login of logins) {
      if (login.statusCode !== 200) {
        assert.equal(login.statusCode, 401, `a racing second step answers 200 or 401, not ${login.statusCode}: ${login.body}`);
        continue;
      }
      started++;
      for (const app of apps()) if ((await app.inject({ method: 'GET', url: '/api/auth/mfa', headers: bearer(login.json().access_token) })).statusCode === 200) surviving++;
      if ((await apps()[1]!.inject({ method: 'POST', url: '/api/auth/refresh', payload: { refresh_token: login.json().refresh_token } })).statusCode === 200) surviving++;
    }
    return { started, surviving };
  }

  it('an admin reset ends every session a racing second step started, on the next request', async () => {
    let started = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const { user, secondSteps } = await pendingLogins(round);
      const logins = secondSteps();
      // One second step is let finish first, so a session surely exists to be ended; the others race the reset.
      await logins[0];
      const reset = fixture.second.app.inject({ method: 'DELETE', url: `/api/users/${user.id}/mfa`, headers: fixture.admin.auth });
      const [resetReply, ...replies] = await Promise.all([reset, ...logins]);
      assert.equal(resetReply.statusCode, 204);
      const outcome = await survivors(replies);
      assert.equal(outcome.surviving, 0, `round ${round}: a session outlived the reset`);
      started += outcome.started;
    }
    assert.ok(started >= ROUNDS, 'the sessions started before the reset were there to end');
  });

  it('a factor removed ends every other session, those a racing second step started included', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { user, factor, secondSteps } = await pendingLogins(round);
      // A second factor, so that the first may go: the session removing it stays.
      await enrolTotp(fixture.first.app, user, 'Spare');
      const logins = secondSteps();
      await logins[0];
      const removal = fixture.second.app.inject({ method: 'DELETE', url: `/api/auth/mfa/factors/${factor.id}`, headers: user.auth });
      const [removed, ...replies] = await Promise.all([removal, ...logins]);
      assert.equal(removed.statusCode, 204, removed.body);
      assert.equal((await survivors(replies)).surviving, 0, `round ${round}: a session outlived the removal`);
      assert.equal((await fixture.first.app.inject({ method: 'GET', url: '/api/auth/mfa', headers: user.auth })).statusCode, 200, 'the session that removed it stays');
    }
  });

  it('accepts one TOTP code once, and one recovery code once, however many requests carry it', async () => {
    const user = await createUser(fixture.first.app);
    const { device, factor } = await enrolTotp(fixture.first.app, user);
    const tokens: string[] = [];
    for (let index = 0; index < 6; index++) tokens.push((await firstStep(apps()[index % 2]!, user.email, user.password)).mfaToken);
    const code = device.next();
    const byCode = await Promise.all(tokens.slice(0, 3).map((mfaToken, index) => apps()[index % 2]!.inject({ method: 'POST', url: '/api/auth/login/mfa', payload: { mfa_token: mfaToken, code } })));
    assert.deepEqual(byCode.map((reply) => reply.statusCode).sort(), [200, 400, 400]);
    const recovery = factor.recovery_codes![0];
    const byRecovery = await Promise.all(tokens.slice(3).map((mfaToken, index) => apps()[index % 2]!.inject({ method: 'POST', url: '/api/auth/login/mfa', payload: { mfa_token: mfaToken, recovery_code: recovery } })));
    assert.deepEqual(byRecovery.map((reply) => reply.statusCode).sort(), [200, 400, 400]);
  });

  it('two factors confirmed at once: one is the first, and one set of recovery codes exists', async () => {
    const user: Session = await createUser(fixture.first.app);
    const started = await Promise.all([0, 1].map(() => fixture.first.app.inject({ method: 'POST', url: '/api/auth/mfa/totp', headers: user.auth, payload: {} })));
    const confirmed = await Promise.all(
      started.map((reply, index) => apps()[index]!.inject({ method: 'POST', url: `/api/auth/mfa/totp/${reply.json().id}/confirm`, headers: user.auth, payload: { code: new TotpDevice(reply.json().secret).next() } })),
    );
    assert.deepEqual(confirmed.map((reply) => reply.statusCode), [200, 200]);
    assert.equal(confirmed.filter((reply) => reply.json().recovery_codes).length, 1);
    const codes = await fixture.first.db.selectFrom('mfa_recovery_codes').select('id').where('user_id', '=', user.id).execute();
    assert.equal(codes.length, 10);
  });
});
