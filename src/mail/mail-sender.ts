import nodemailer from 'nodemailer';
import { inSpan, SpanKind } from '../tracing.js';
import type { EmailRow } from '../db/tables.js';
import type { Attempt, QueueDefinition } from '../jobs/work-queue.js';
import { settleMail, type SentMailColumns } from './mail-outbox.js';

/** Growing pauses between attempts; a mail still unsent 24 hours after it was queued has failed. */
const RETRY_DELAYS_SECONDS = [10, 30, 60, 300, 900, 1800, 3600, 7200, 14_400, 28_800];
const GIVE_UP_AFTER_MS = 24 * 60 * 60 * 1000;
/**
 * The longest a sending attempt may take (API.md section 17, "Slow mail servers"): then its
 * connection is destroyed, and only then is the attempt counted failed and the mail retried.
 */
export const SEND_DEADLINE_MS = 60_000;
/**
 * nodemailer's time-outs before a word of the mail is sent (its defaults reach ten minutes): a
 * server that is down fails its attempt early, when no retry can make it receive the mail twice.
 */
const SMTP_SETUP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, dnsTimeout: 5_000 };

export interface MailSender {
  queue: QueueDefinition<EmailRow, SentMailColumns>;
  close(): void;
}

/**
 * The email outbox on the work queue: each mail sent on its own through SMTP_URL with
 * nodemailer, retried with growing pauses for 24 hours. Once sent, its bodies (which may hold a
 * one-time link) are cleared. Failures are logged by the queue without the mail's content.
 */
export function createMailSender(smtpUrl: string, from: string, options: { deadlineMs?: number } = {}): MailSender {
  const deadlineMs = options.deadlineMs ?? SEND_DEADLINE_MS;
  // The transport's options in the first argument (the second holds a message's defaults only).
  const transport = nodemailer.createTransport(
    {
      url: smtpUrl,
      ...SMTP_SETUP_TIMEOUTS,
      // Once the mail is on its way, the deadline alone decides: a server that answers the end of
      // the message within it is heard (cut off sooner, it might keep the mail and get it again).
      socketTimeout: deadlineMs,
      // A connection is closed by destroying its socket, not by a half-close the server may outlast
      // (and, answering late, accept the mail its sender already counts as failed).
      socketCloseTimeout: 0,
    },
    { from },
  );
  // One span a send (tracing on), without the address or the content.
  const send = (mail: EmailRow, deadline: AbortSignal): Promise<Attempt<SentMailColumns>> =>
    inSpan('smtp send', { kind: SpanKind.CLIENT, attributes: { 'server.address': new URL(smtpUrl).hostname } }, async () => {
      // At the deadline nodemailer destroys the attempt's connection at once (in the abort
      // itself), before the queue records the failure that lets the next attempt start.
      await transport.sendMail({ to: mail.to_address, subject: mail.subject, text: mail.text_body, html: mail.html_body, signal: deadline });
      return { ok: true, columns: { sent_at: new Date(), text_body: '', html_body: '' } };
    });
  return {
    queue: {
      name: 'send-mail',
      table: 'email_outbox',
      settle: settleMail,
      deadlineMs,
      // Twice the deadline: a claim lapses only when its instance died mid-send.
      leaseSeconds: (2 * deadlineMs) / 1000,
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
