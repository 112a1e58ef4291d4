import type { Kysely } from 'kysely';
import nodemailer from 'nodemailer';
import type { Database, EmailRow } from '../db/tables.js';
import { claimDueMails, markMailFailed, markMailSent } from './mail-outbox.js';

const BATCH_SIZE = 10;
/** Growing pauses between attempts; a mail still unsent 24 hours after it was queued has failed. */
const RETRY_DELAYS_SECONDS = [10, 30, 60, 300, 900, 1800, 3600, 7200, 14_400, 28_800];
const GIVE_UP_AFTER_MS = 24 * 60 * 60 * 1000;

export interface MailSender {
  sendDue(): Promise<number>;
  close(): void;
}

/** Sends queued mails through SMTP_URL with nodemailer; failures are retried, never logged with their body. */
export function createMailSender(db: Kysely<Database>, smtpUrl: string, from: string): MailSender {
  const transport = nodemailer.createTransport(smtpUrl, { from });
  const retryDelay = (mail: EmailRow) => {
    if (Date.now() - new Date(mail.created_at).getTime() >= GIVE_UP_AFTER_MS) return undefined;
    return RETRY_DELAYS_SECONDS[Math.min(mail.attempts - 1, RETRY_DELAYS_SECONDS.length - 1)];
  };
  const send = async (mail: EmailRow) => {
    try {
      await transport.sendMail({ to: mail.to_address, subject: mail.subject, text: mail.text_body, html: mail.html_body });
      await markMailSent(db, mail.id);
    } catch (error) {
      await markMailFailed(db, mail.id, String((error as Error).message).slice(0, 500), retryDelay(mail));
    }
  };
  return {
    async sendDue() {
      const mails = await claimDueMails(db, BATCH_SIZE);
      await Promise.all(mails.map(send));
      return mails.length;
    },
    close: () => transport.close(),
  };
}
