import nodemailer from 'nodemailer';
import { inSpan, SpanKind } from '../tracing.js';
import type { EmailRow } from '../db/tables.js';
import type { Attempt, QueueDefinition } from '../jobs/work-queue.js';

/** Growing pauses between attempts; a mail still unsent 24 hours after it was queued has failed. */
const RETRY_DELAYS_SECONDS = [10, 30, 60, 300, 900, 1800, 3600, 7200, 14_400, 28_800];
const GIVE_UP_AFTER_MS = 24 * 60 * 60 * 1000;
/** nodemailer's own time-outs (its defaults reach ten minutes), all well within the attempt's deadline. */
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000, dnsTimeout: 5_000 };
const DEADLINE_MS = 60_000;

export interface MailSender {
  queue: QueueDefinition<EmailRow>;
  close(): void;
}

/**
 * The email outbox on the work queue: each mail sent on its own through SMTP_URL with
 * nodemailer, retried with growing pauses for 24 hours. Once sent, its bodies (which may hold a
 * one-time link) are cleared. Failures are logged by the queue without the mail's content.
 */
export function createMailSender(smtpUrl: string, from: string): MailSender {
  const transport = nodemailer.createTransport(`${smtpUrl}`, { from, ...SMTP_TIMEOUTS });
  // One span a send (tracing on), without the address or the content.
  const send = (mail: EmailRow): Promise<Attempt> =>
    inSpan('smtp send', { kind: SpanKind.CLIENT, attributes: { 'server.address': new URL(smtpUrl).hostname } }, async () => {
      await transport.sendMail({ to: mail.to_address, subject: mail.subject, text: mail.text_body, html: mail.html_body });
      return { ok: true, columns: { sent_at: new Date(), text_body: '', html_body: '' } };
    });
  return {
    queue: {
      name: 'send-mail',
      table: 'email_outbox',
      doneStatus: 'sent',
      deadlineMs: DEADLINE_MS,
      // Twice the deadline: a claim lapses only when its instance died mid-send.
      leaseSeconds: (2 * DEADLINE_MS) / 1000,
      concurrency: 10,
      retryDelaySeconds: (mail) => {
        if (Date.now() - new Date(mail.created_at).getTime() >= GIVE_UP_AFTER_MS) return undefined;
        return RETRY_DELAYS_SECONDS[Math.min(mail.attempts - 1, RETRY_DELAYS_SECONDS.length - 1)];
      },
      attempt: send,
    },
    close: () => transport.close(),
  };
}
