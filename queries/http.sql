-- Written by `npm run queries` from scripts/query-registry/; do not edit. Each function: the statements its sample sends, in order; parameters as $1.., their values left out.

-- src/http/idempotency-key-repository.ts: claimKey({ ownerId: '00000000-0000-4000-8000-000000000001', key: 'key-1', fingerprint: 'fingerprint-1' })
insert into "idempotency_keys" ("owner_id", "key", "request_fingerprint", "state", "response_status", "response_body", "response_headers", "locked_until", "expires_at", "created_at") values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
  on conflict ("owner_id", "key") do nothing
  returning "key";

-- src/http/idempotency-key-repository.ts: completeKey({ ownerId: '00000000-0000-4000-8000-000000000001', key: 'key-1', fingerprint: 'fingerprint-1' }, { status: 200, body: { ok: true } })
update "idempotency_keys" set "state" = $1, "response_status" = $2, "response_body" = $3, "response_headers" = $4
  where "owner_id" = $5 and "key" = $6;

-- src/http/idempotency-key-repository.ts: releaseKey({ ownerId: '00000000-0000-4000-8000-000000000001', key: 'key-1', fingerprint: 'fingerprint-1' })
delete from "idempotency_keys" where "owner_id" = $1 and "key" = $2;

-- src/http/idempotency-key-repository.ts: deleteExpiredIdempotencyKeys()
delete from "idempotency_keys" where "expires_at" <= $1;

-- src/http/idempotency-key-repository.ts: forgetRepliesAbout('00000000-0000-4000-8000-000000000001')
delete from idempotency_keys where owner_id = $1 or response_body::text like $2;
