import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { mailQueueStats } from './mail-outbox.js';
import { createMailSender } from './mail-sender.js';

/** The sender loop every instance runs; without SMTP_URL, mails wait in the outbox. */
export const mailPlugin = fastifyPlugin(
  async (app: FastifyInstance) => {
    const { smtpUrl, mailFrom } = app.config;
    app.metrics.queue('email_queue', 'Emails waiting in the outbox to be sent', () => mailQueueStats(app.db));
    if (!smtpUrl) {
      app.log.warn('SMTP_URL is not set: emails (password resets, verifications) wait in the outbox until it is');
      return;
    }
    const sender = createMailSender(app.db, smtpUrl, mailFrom);
    app.jobs.add({ name: 'send-mail', everyMs: 1000, run: () => sender.sendDue() });
    app.addHook('onClose', async () => sender.close());
  },
  { name: 'mail', dependencies: ['database', 'jobs', 'metrics'] },
);
