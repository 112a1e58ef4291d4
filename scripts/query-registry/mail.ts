import type { EmailRow } from '../../src/db/tables.js';
import * as mailOutbox from '../../src/mail/mail-outbox.js';
import { call, custom, SAMPLE, type RepositoryFile } from './sample.js';

export const mail: RepositoryFile[] = [
  {
    // The outbox's SQL, by the name of what it is (see index.ts).
    file: 'src/mail/mail-outbox.ts',
    area: 'mail',
    entries: {
      queueMail: call(mailOutbox.queueMail, { to: 'ada@example.com', subject: 'Reset your password', text: 'text', html: '<p>html</p>' }),
      purgeSentMails: call(mailOutbox.purgeSentMails),
      forgetMailTo: call(mailOutbox.forgetMailTo, ['ada@example.com']),
      // The outbox queue's settle (jobs/work-queue.ts): a mail sent, under its claim, its bodies dropped.
      settleMail: custom('a mail under its claim, sent', (trx) =>
        mailOutbox.settleMail(trx, { id: SAMPLE.newId, claim_token: '00000000-0000-4000-8000-000000000016' } as EmailRow, {
          outcome: 'done',
          error: null,
          columns: { sent_at: SAMPLE.date, text_body: '', html_body: '' },
        }),
      ),
    },
  },
];
