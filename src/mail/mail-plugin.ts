import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { DatabaseHandle } from '../db/database.js';
import { queueStats } from '../jobs/work-queue.js';
import { purgeSentMails } from './mail-outbox.js';
import { createMailSender } from './mail-sender.js';
import type { JobRunner } from '../jobs/job-runner.js';

const HOUR_MS = 60 * 60 * 1000;

/** The sender every instance runs on the work queue; without SMTP_URL, mails wait in the outbox. */
export const mailPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { database: DatabaseHandle; jobs: JobRunner }) => {
    const { smtpUrl, mailFrom } = app.config;
    const { db } = options.database;
    app.metrics.queue('email_queue', 'Emails waiting in the outbox to be sent', () => queueStats(db, 'email_outbox'));
    options.jobs.add({ name: 'purge-sent-mail', everyMs: HOUR_MS, run: () => purgeSentMails(db) });
    if (!smtpUrl) {
      app.log.warn('SMTP_URL is not set: emails (password resets, verifications) wait in the outbox until it is');
      return;
    }
    const sender = createMailSender(smtpUrl, mailFrom);
    options.jobs.addQueue(db, sender.queue);
    app.addHook('onClose', async () => sender.close());
  },
  { name: 'mail', dependencies: ['database', 'metrics'] },
);
