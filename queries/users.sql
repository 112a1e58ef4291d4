-- Written by `npm run queries` from scripts/query-registry/; do not edit. Each function: the statements its sample sends, in order; parameters as $1.., their values left out.

-- src/users/account-attempt-repository.ts: insertAccountAttempt('login_failure', 'ada@example.com')
insert into "account_attempts" ("id", "kind", "subject", "created_at") values ($1, $2, $3, now());

-- src/users/account-attempt-repository.ts: deleteAccountAttempt('00000000-0000-4000-8000-000000000099')
delete from "account_attempts" where "id" = $1;

-- src/users/account-attempt-repository.ts: deleteAccountAttempts('login_failure', 'ada@example.com')
delete from "account_attempts" where "kind" = $1 and "subject" = $2;

-- src/users/account-attempt-repository.ts: countRecentAttempts('login_failure', 'ada@example.com', 900)
select count(*) as "count", extract(epoch from now() - min(created_at)) as "oldest", extract(epoch from now() - max(created_at)) as "newest"
  from "account_attempts"
  where "kind" = $1 and "subject" = $2 and "created_at" > now() - make_interval(secs => $3);

-- src/users/account-attempt-repository.ts: deleteStaleAccountAttempts()
delete from "account_attempts" where "created_at" < now() - interval '1 day';

-- src/users/account-token-repository.ts: createAccountToken({ userId: '00000000-0000-4000-8000-000000000001', purpose: 'email_verification', email: 'ada@example.com', ttlSeconds: 86400 })
insert into "one_time_tokens" ("id", "user_id", "purpose", "token_hash", "email", "expires_at", "created_at", "sealed_token") values ($1, $2, $3, $4, $5, $6, $7, $8);

-- src/users/account-token-repository.ts: findLiveAccountToken('password_reset', 'token-value')
select *
  from "one_time_tokens"
  where "token_hash" = $1 and "purpose" = $2 and "used_at" is null and "expires_at" > $3 for update;

-- src/users/account-token-repository.ts: accountTokenIsLive('password_reset', 'token-value')
select "id"
  from "one_time_tokens"
  where "token_hash" = $1 and "purpose" = $2 and "used_at" is null and "expires_at" > $3;

-- src/users/account-token-repository.ts: findResendableAccountToken('00000000-0000-4000-8000-000000000001', 'email_verification', 'ada@example.com')
select *
  from "one_time_tokens"
  where "user_id" = $1 and "purpose" = $2 and "used_at" is null and "expires_at" > $3 and "sealed_token" is not null and lower(email) = $4
  order by "created_at" desc;

-- src/users/account-token-repository.ts: countRecentAccountTokens('00000000-0000-4000-8000-000000000001', 'password_reset', 3600)
select count(*) as "count"
  from "one_time_tokens"
  where "user_id" = $1 and "purpose" = $2 and "created_at" > $3;

-- src/users/account-token-repository.ts: spendAccountTokens('00000000-0000-4000-8000-000000000001', 'password_reset')
update "one_time_tokens" set "used_at" = $1, "sealed_token" = $2
  where "user_id" = $3 and "purpose" = $4 and "used_at" is null;

-- src/users/account-token-repository.ts: clearExpiredSealedTokens()
update "one_time_tokens" set "sealed_token" = $1
  where "sealed_token" is not null and "expires_at" <= $2;

-- src/users/balance-repository.ts: insertLedgerEntry({ user_id: '00000000-0000-4000-8000-000000000001', delta: 500, balance_after: 500, currency: 'EUR', reason: 'top-up', actor_id: '00000000-0000-4000-8000-000000000001', created_at: '2026-01-01T00:00:00.000Z' })
insert into "balance_ledger" ("id", "user_id", "delta", "balance_after", "currency", "reason", "actor_id", "created_at") values ($1, $2, $3, $4, $5, $6, $7, $8);

-- src/users/balance-repository.ts: ledgerPage('00000000-0000-4000-8000-000000000001', { limit: 20 })
select * from "balance_ledger" where "user_id" = $1 order by "created_at" desc, "id" desc limit $2;

-- src/users/balance-repository.ts: ledgerOldestFirstPage('00000000-0000-4000-8000-000000000001', { limit: 20 })
select * from "balance_ledger" where "user_id" = $1 order by "created_at" asc, "id" asc limit $2;

-- src/users/balance-repository.ts: countLedgerEntries('00000000-0000-4000-8000-000000000001')
select count(*) as "total" from "balance_ledger" where "user_id" = $1;

-- src/users/email-code-repository.ts: lockAddressForCodes('Ada@Example.com')
select pg_advisory_xact_lock(19025, hashtext($1));

-- src/users/email-code-repository.ts: countRecentEmailCodes('Ada@Example.com', 3600)
select count(*) as "count"
  from "email_codes"
  where lower(email) = $1 and "created_at" > now() - make_interval(secs => $2);

-- src/users/email-code-repository.ts: spendCodesOfAddress('Ada@Example.com')
update "email_codes" set "used_at" = $1, "signup_name" = $2, "signup_password_hash" = $3, "signup_browser_hash" = $4
  where lower(email) = $5 and "used_at" is null;

-- src/users/email-code-repository.ts: insertEmailCode({ email: 'ada@example.com', userId: '00000000-0000-4000-8000-000000000001', value: '042917', ttlSeconds: 600 })
insert into "email_codes" ("id", "email", "user_id", "code_hash", "created_at", "expires_at", "signup_name", "signup_password_hash", "signup_browser_hash") values ($1, $2, $3, $4, $5, $6, $7, $8, $9);

-- src/users/email-code-repository.ts: findLiveEmailCode('Ada@Example.com', 5)
select *
  from "email_codes"
  where lower(email) = $1 and "used_at" is null and "expires_at" > $2 and "failures" < $3
  order by "created_at" desc
  limit $4;

-- src/users/email-code-repository.ts: lockEmailCode('00000000-0000-4000-8000-000000000099')
select * from "email_codes" where "id" = $1 for update;

-- src/users/email-code-repository.ts: countEmailCodeFailure('00000000-0000-4000-8000-000000000099')
update "email_codes" set "failures" = failures + 1 where "id" = $1;

-- src/users/email-code-repository.ts: spendEmailCode('00000000-0000-4000-8000-000000000099')
update "email_codes" set "used_at" = $1, "signup_name" = $2, "signup_password_hash" = $3, "signup_browser_hash" = $4
  where "id" = $5;

-- src/users/email-code-repository.ts: spendLiveEmailCode('00000000-0000-4000-8000-000000000099')
update "email_codes" set "used_at" = $1, "signup_name" = $2, "signup_password_hash" = $3, "signup_browser_hash" = $4
  where "id" = $5 and "used_at" is null and "expires_at" > $6
  returning "id";

-- src/users/email-code-repository.ts: spendCodesOfUser('00000000-0000-4000-8000-000000000001', ['ada@example.com', 'ada.lovelace@example.com'])
update "email_codes" set "used_at" = $1, "signup_name" = $2, "signup_password_hash" = $3, "signup_browser_hash" = $4
  where "used_at" is null and ("user_id" = $5 or lower(email) in ($6, $7));

-- src/users/email-code-repository.ts: deleteStaleEmailCodes()
delete from "email_codes" where "created_at" < now() - interval '1 day';

-- src/users/email-code-repository.ts: deleteCodesOfUser('00000000-0000-4000-8000-000000000001')
delete from "email_codes" where "user_id" = $1 returning "email";

-- src/users/user-repository.ts: userById(beside a user's caller, then alone: '00000000-0000-4000-8000-000000000001')
select json_build_object('caller__kind', 'user', 'caller__id', "users"."id", 'caller__role', "users"."role", 'caller__status', case when users.deleted_at is null then users.status else 'deleted' end, 'caller__live', (sessions.id is not null and sessions.ended_at is null and sessions.expires_at > now() and sessions.client_id is null), 'caller__stale', (sessions.last_used_at is null or sessions.last_used_at < now() - interval '1 minute'), 'caller__scopes', null::text[], 'caller__rate_limit', null::integer, 'caller__credential', null::uuid, 'caller__mfa_enrolled', coalesce(confirmed_factor.enrolled, false), 'caller__mfa_age', floor(extract(epoch from now() - sessions.mfa_verified_at))::integer) as "caller__columns", "requested".*
  from "users"
  left join "sessions" on "sessions"."id" = $1 and "sessions"."user_id" = "users"."id"
  left join lateral (select true as "enrolled"
  from "mfa_factors"
  where "mfa_factors"."user_id" = "users"."id" and "mfa_factors"."confirmed_at" is not null
  limit 1) as "confirmed_factor" on true
  left join lateral (select true as "caller__row", "requested_rows".*
  from (select *
  from "users"
  where "id" = $2 and "deleted_at" is null) as "requested_rows") as "requested" on true
  where "users"."id" = $3;
select * from "users" where "id" = $1 and "deleted_at" is null;

-- src/users/user-repository.ts: userRecordById(beside a user's caller, then alone: '00000000-0000-4000-8000-000000000001')
select json_build_object('caller__kind', 'user', 'caller__id', "users"."id", 'caller__role', "users"."role", 'caller__status', case when users.deleted_at is null then users.status else 'deleted' end, 'caller__live', (sessions.id is not null and sessions.ended_at is null and sessions.expires_at > now() and sessions.client_id is null), 'caller__stale', (sessions.last_used_at is null or sessions.last_used_at < now() - interval '1 minute'), 'caller__scopes', null::text[], 'caller__rate_limit', null::integer, 'caller__credential', null::uuid, 'caller__mfa_enrolled', coalesce(confirmed_factor.enrolled, false), 'caller__mfa_age', floor(extract(epoch from now() - sessions.mfa_verified_at))::integer) as "caller__columns", "requested".*
  from "users"
  left join "sessions" on "sessions"."id" = $1 and "sessions"."user_id" = "users"."id"
  left join lateral (select true as "enrolled"
  from "mfa_factors"
  where "mfa_factors"."user_id" = "users"."id" and "mfa_factors"."confirmed_at" is not null
  limit 1) as "confirmed_factor" on true
  left join lateral (select true as "caller__row", "requested_rows".*
  from (select *
  from "users"
  where "id" = $2) as "requested_rows") as "requested" on true
  where "users"."id" = $3;
select * from "users" where "id" = $1;

-- src/users/user-repository.ts: findUserById('00000000-0000-4000-8000-000000000001')
select * from "users" where "id" = $1 and "deleted_at" is null;

-- src/users/user-repository.ts: findUserRecord('00000000-0000-4000-8000-000000000001')
select * from "users" where "id" = $1;

-- src/users/user-repository.ts: addressesNobodyHolds(['ada@example.com', 'grace@example.com'], '00000000-0000-4000-8000-000000000099')
select lower(email) as "address"
  from "users"
  where lower(email) in ($1, $2) and "deleted_at" is null and "id" != $3;

-- src/users/user-repository.ts: findUserByIdForUpdate('00000000-0000-4000-8000-000000000001')
select * from "users" where "id" = $1 and "deleted_at" is null for update;

-- src/users/user-repository.ts: lockUserForLogin('00000000-0000-4000-8000-000000000001')
select "id", "status", "password_hash", "session_version", "deleted_at"
  from "users"
  where "id" = $1 for share;

-- src/users/user-repository.ts: findUserByEmail('Ada@Example.com')
select * from "users" where lower(email) = $1 and "deleted_at" is null;

-- src/users/user-repository.ts: insertUser({ id: '00000000-0000-4000-8000-000000000099', email: 'grace@example.com', name: 'Grace', phone: null, role: 'user', status: 'active', password_hash: 'hash', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', deleted_at: null })
insert into "users" ("id", "email", "name", "phone", "role", "status", "password_hash", "created_at", "updated_at", "deleted_at") values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
  returning *;

-- src/users/user-repository.ts: updateUser('00000000-0000-4000-8000-000000000001', { name: 'Ada L.' })
update "users" set "updated_at" = $1, "name" = $2, "version" = version + 1
  where "id" = $3
  returning *;

-- src/users/user-repository.ts: lockActiveAdminsAndTarget('00000000-0000-4000-8000-000000000001')
select "id", "role", "status"
  from "users"
  where "deleted_at" is null and (("role" = $1 and "status" = $2) or "id" = $3)
  order by "id" for update;

-- src/users/user-repository.ts: anyAdminExists()
select "id" from "users" where "role" = $1 and "deleted_at" is null limit $2;

-- src/users/user-repository.ts: usersPage({ q: 'ada', role: 'admin' }, { limit: 20 })
select *
  from "users"
  where "deleted_at" is null and "role" = $1 and ("email" ilike $2 or "name" ilike $3)
  order by "created_at" desc, "id" desc
  limit $4;

-- src/users/user-repository.ts: countUsers({ q: 'ada', role: 'admin' })
select count(*) as "total"
  from "users"
  where "deleted_at" is null and "role" = $1 and ("email" ilike $2 or "name" ilike $3);
