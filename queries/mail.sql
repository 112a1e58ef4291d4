-- Written by `npm run queries` from scripts/query-registry/; do not edit. Each function: the statements its sample sends, in order; parameters as $1.., their values left out.

-- src/mail/mail-outbox.ts: queueMail({ to: 'ada@example.com', subject: 'Reset your password', text: 'text', html: '<p>html</p>' })
insert into "email_outbox" ("id", "to_address", "subject", "text_body", "html_body", "status", "attempts", "next_attempt_at", "created_at") values ($1, $2, $3, $4, $5, $6, $7, $8, $9);

-- src/mail/mail-outbox.ts: purgeSentMails()
delete from "email_outbox" where "status" = $1 and "sent_at" < now() - interval '7 days';

-- src/mail/mail-outbox.ts: forgetMailTo(['ada@example.com'])
delete from "email_outbox" where lower(to_address) in ($1);

-- src/mail/mail-outbox.ts: settleMail(a mail under its claim, sent)
update "email_outbox" set "claimed_until" = $1, "claim_token" = $2, "last_error" = $3, "status" = $4, "sent_at" = $5, "text_body" = $6, "html_body" = $7
  where "id" = $8 and "claim_token" = $9
  returning "id";
