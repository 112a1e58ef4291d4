import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SmtpCatcher } from '../helpers/smtp-catcher.js';
import { buildTestApp, uniqueEmail } from '../helpers/test-app.js';

/** API.md section 10, "Secrets at rest": mail bodies holding one-time links are not kept after sending. */
describe('the email outbox', () => {
  it('clears a mail’s bodies once it is sent, and purges sent mails after 7 days', async () => {
    const catcher = new SmtpCatcher();
    const testApp = await buildTestApp({ environment: { SMTP_URL: await catcher.start() } });
    try {
      const email = uniqueEmail();
      await testApp.app.inject({ method: 'POST', url: '/api/auth/register', payload: { email, password: 'password-123', name: 'Mailed' } });
      const queued = await testApp.db.selectFrom('email_outbox').selectAll().where('to_address', '=', email).executeTakeFirstOrThrow();
      assert.match(queued.text_body, /token=/, 'the link waits in the outbox until it is sent');
      await testApp.jobs.runNow('send-mail');
      assert.ok(catcher.mails.some((mail) => mail.to.includes(email) && /token=/.test(mail.text)), 'the mail went out with its link');
      const sent = await testApp.db.selectFrom('email_outbox').selectAll().where('id', '=', queued.id).executeTakeFirstOrThrow();
      assert.equal(sent.status, 'sent');
      assert.equal(sent.text_body, '');
      assert.equal(sent.html_body, '');
      assert.ok(sent.sent_at);

      await testApp.db.updateTable('email_outbox').set({ sent_at: new Date(Date.now() - 6 * 86_400_000) }).where('id', '=', queued.id).execute();
      await testApp.jobs.runNow('purge-sent-mail');
      assert.ok(await testApp.db.selectFrom('email_outbox').select('id').where('id', '=', queued.id).executeTakeFirst(), 'kept for a week');
      await testApp.db.updateTable('email_outbox').set({ sent_at: new Date(Date.now() - 8 * 86_400_000) }).where('id', '=', queued.id).execute();
      await testApp.jobs.runNow('purge-sent-mail');
      assert.equal(await testApp.db.selectFrom('email_outbox').select('id').where('id', '=', queued.id).executeTakeFirst(), undefined, 'gone after 7 days');
    } finally {
      await testApp.close();
      await catcher.stop();
    }
  });
});
