import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually } from '../helpers/eventually.js';
import { freePort, startService } from '../helpers/service-process.js';
import { SmtpCatcher } from '../helpers/smtp-catcher.js';
import { JWT_SECRET, createScratchDatabase, onPostgres, uniqueEmail, useAppWithAdmin } from '../helpers/test-app.js';

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Rounds of the reset timing's first reading, and of its longer one when the first is unclear. */
const FIRST_ROUNDS = 24;
const MOST_ROUNDS = 72;
/** API.md section 10: an account gets at most 3 reset mails an hour; a fourth ask sends none. */
const RESET_MAILS_AN_HOUR = 3;

/** Times one request, in milliseconds. */
async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = process.hrtime.bigint();
  await run();
  return Number(process.hrtime.bigint() - started) / 1e6;
}

/**
 * API.md section 10, "Reset links": speed as a ratio between requests in this process, never an
 * absolute time. Known and unknown emails are asked for alternately, so a loaded machine slows both.
 */
describe('password reset timing', () => {
  const fixture = useAppWithAdmin();

  it('answers a reset request for a known email as fast as for an unknown one', async () => {
    // The service in a process of its own, as a client meets it: its work after the reply must not
    // be counted in the client's time, as it would be with both in one event loop.
    const catcher = new SmtpCatcher();
    const dataDir = await mkdtemp(path.join(tmpdir(), 'reset-timing-'));
    const scratch = onPostgres ? await createScratchDatabase() : undefined;
    const service = await startService({
      PORT: await freePort(),
      DATA_DIR: dataDir,
      DATABASE_URL: scratch?.url ?? '',
      SMTP_URL: await catcher.start(),
      ADMIN_EMAIL: 'timing-admin@example.com',
      ADMIN_PASSWORD: 'timing-admin-password',
      JWT_SECRET,
      LOGIN_RATE_LIMIT: '100000',
      API_RATE_LIMIT: '100000',
    });
    try {
      const post = (path: string, body: object) =>
        fetch(`${service.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((reply) => reply.text());
      // Enough accounts for the longest reading, each asked at most as often as it gets reset mails in an hour.
      const emails = Array.from({ length: Math.ceil(MOST_ROUNDS / RESET_MAILS_AN_HOUR) }, () => uniqueEmail('timed'));
      for (const email of emails) await post('/api/auth/register', { email, password: 'password-123', name: 'Timed' });
      await eventually(() => (catcher.mails.length >= emails.length ? true : undefined), 'the registration mails');
      const askKnown = async (round: number) => {
        const mailsBefore = catcher.mails.length;
        const took = await timed(() => post('/api/auth/password-reset', { email: emails[round % emails.length] }));
        // The link is queued, then sent, after the reply; wait for the mail before timing more.
        await eventually(() => (catcher.mails.length > mailsBefore ? true : undefined), 'the reset mail');
        return took;
      };
      // As many unknown addresses as known ones, each asked as often: the rate limiter's first use of a
      // key (an insert) and its later ones (updates) then weigh on both kinds alike.
      const ghosts = Array.from({ length: emails.length }, () => uniqueEmail('ghost'));
      const askUnknown = (round: number) => timed(() => post('/api/auth/password-reset', { email: ghosts[round % ghosts.length] }));
      // Each round compares a known and an unknown ask made under the same conditions: in even rounds
      // both follow an unknown ask, in odd rounds both follow the service's sending of a mail (whose
      // last writes may still run). Comparing the two kinds' medians instead would compare two mixes
      // of fast and slow asks, where one sample moves a median from one group to the other (seen
      // as 0.70 and 1.55 on a quiet machine); single asks vary from 2 to 20 ms, and the median of
      // the rounds' ratios measured 0.93 to 1.17 over five runs (with 8 accounts asked three times
      // each; now the first 24 rounds ask 24 accounts once each, and two first readings on a quiet
      // machine were 0.87 and one under 0.8, which 72 rounds then brought within the bounds).
      const ratios: number[] = [];
      const measure = async (rounds: number) => {
        for (let round = ratios.length; round < rounds; round++) {
          if (round % 2 === 0) {
            const unknown = await askUnknown(round);
            ratios.push((await askKnown(round)) / unknown);
          } else {
            const known = await askKnown(round);
            ratios.push(known / (await askUnknown(round)));
          }
        }
      };
      await measure(FIRST_ROUNDS);
      // A first reading outside 0.8 to 1.2 is measured longer, not retried: a loaded machine once read
      // 1.37 over 24 rounds whose single ratios ran from 0.25 to 2.79, and three times the rounds
      // narrow the median where a retry would only give chance another go.
      if (!(median(ratios) > 0.8 && median(ratios) < 1.2)) await measure(MOST_ROUNDS);
      const ratio = median(ratios);
      // What could leak is work added before the reply for a known account: a slower reply.
      assert.ok(ratio > 0.67 && ratio < 1.33, `known/unknown: median ratio ${ratio.toFixed(2)} of ${ratios.length} rounds (${ratios.map((each) => each.toFixed(2)).join(' ')})`);
    } finally {
      service.child.kill('SIGTERM');
      await service.exited;
      await catcher.stop();
      await rm(dataDir, { recursive: true, force: true });
      await scratch?.drop();
    }
  });

  it('refuses an unknown reset token without hashing the new password', async () => {
    const bogus: number[] = [];
    const hashed: number[] = [];
    for (let round = 0; round < 8; round++) {
      bogus.push(await timed(() => fixture.app.inject({ method: 'POST', url: '/api/auth/password-reset/confirm', payload: { token: 'x'.repeat(43), new_password: 'a-new-password-1' } })));
      // A failed login costs one argon2 verification: the price a hash would add.
      hashed.push(await timed(() => fixture.app.inject({ method: 'POST', url: '/api/auth/login', remoteAddress: `127.2.0.${round}`, payload: { email: uniqueEmail('x'), password: 'wrong-password-1' } })));
    }
    const ratio = median(bogus) / median(hashed);
    assert.ok(ratio < 0.4, `a bogus confirmation costs ${ratio.toFixed(2)} of an argon2 operation`);
  });
});
