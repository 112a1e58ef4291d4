-- Written by `npm run queries` from scripts/query-registry/; do not edit. Each function: the statements its sample sends, in order; parameters as $1.., their values left out.

-- src/mfa/challenge-repository.ts: insertChallenge({ value: 'challenge-1', purpose: 'authentication', userId: '00000000-0000-4000-8000-000000000001', owner: { loginTokenId: '00000000-0000-4000-8000-000000000013' }, ttlSeconds: 300 })
insert into "webauthn_challenges" ("challenge", "purpose", "user_id", "login_token_id", "session_id", "expires_at") values ($1, $2, $3, $4, $5, $6);

-- src/mfa/challenge-repository.ts: takeChallenge({ value: 'challenge-1', purpose: 'authentication', userId: '00000000-0000-4000-8000-000000000001', owner: { loginTokenId: '00000000-0000-4000-8000-000000000013' } })
delete
  from "webauthn_challenges"
  where "challenge" = $1 and "purpose" = $2 and "user_id" = $3 and "login_token_id" = $4
  returning "expires_at";

-- src/mfa/challenge-repository.ts: insertSignInChallenge({ value: 'challenge-2', ttlSeconds: 300 })
insert into "webauthn_challenges" ("challenge", "purpose", "user_id", "login_token_id", "session_id", "expires_at") values ($1, $2, $3, $4, $5, $6);

-- src/mfa/challenge-repository.ts: takeSignInChallenge('challenge-2')
delete from "webauthn_challenges" where "challenge" = $1 and "purpose" = $2 returning "expires_at";

-- src/mfa/challenge-repository.ts: deleteExpiredChallenges()
delete from "webauthn_challenges" where "expires_at" < now();

-- src/mfa/factor-repository.ts: confirmedFactorsOfUser(beside a user's caller, then alone: '00000000-0000-4000-8000-000000000001')
select json_build_object('caller__kind', 'user', 'caller__id', "users"."id", 'caller__role', "users"."role", 'caller__status', case when users.deleted_at is null then users.status else 'deleted' end, 'caller__live', (sessions.id is not null and sessions.ended_at is null and sessions.expires_at > now() and sessions.client_id is null), 'caller__stale', (sessions.last_used_at is null or sessions.last_used_at < now() - interval '1 minute'), 'caller__scopes', null::text[], 'caller__rate_limit', null::integer, 'caller__credential', null::uuid, 'caller__mfa_enrolled', coalesce(confirmed_factor.enrolled, false), 'caller__mfa_age', floor(extract(epoch from now() - sessions.mfa_verified_at))::integer) as "caller__columns", "requested".*
  from "users"
  left join "sessions" on "sessions"."id" = $1 and "sessions"."user_id" = "users"."id"
  left join lateral (select true as "enrolled"
  from "mfa_factors"
  where "mfa_factors"."user_id" = "users"."id" and "mfa_factors"."confirmed_at" is not null
  limit 1) as "confirmed_factor" on true
  left join lateral (select true as "caller__row", "requested_rows".*
  from (select *, (select count(*)::integer
  from mfa_recovery_codes
  where mfa_recovery_codes.user_id = mfa_factors.user_id and used_at is null) as "recovery_codes_left"
  from "mfa_factors"
  where "user_id" = $2 and "confirmed_at" is not null
  order by "created_at", "id") as "requested_rows") as "requested" on true
  where "users"."id" = $3;
select *, (select count(*)::integer
  from mfa_recovery_codes
  where mfa_recovery_codes.user_id = mfa_factors.user_id and used_at is null) as "recovery_codes_left"
  from "mfa_factors"
  where "user_id" = $1 and "confirmed_at" is not null
  order by "created_at", "id";

-- src/mfa/factor-repository.ts: factorOfUser(beside a user's caller, then alone: '00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000012')
select json_build_object('caller__kind', 'user', 'caller__id', "users"."id", 'caller__role', "users"."role", 'caller__status', case when users.deleted_at is null then users.status else 'deleted' end, 'caller__live', (sessions.id is not null and sessions.ended_at is null and sessions.expires_at > now() and sessions.client_id is null), 'caller__stale', (sessions.last_used_at is null or sessions.last_used_at < now() - interval '1 minute'), 'caller__scopes', null::text[], 'caller__rate_limit', null::integer, 'caller__credential', null::uuid, 'caller__mfa_enrolled', coalesce(confirmed_factor.enrolled, false), 'caller__mfa_age', floor(extract(epoch from now() - sessions.mfa_verified_at))::integer) as "caller__columns", "requested".*
  from "users"
  left join "sessions" on "sessions"."id" = $1 and "sessions"."user_id" = "users"."id"
  left join lateral (select true as "enrolled"
  from "mfa_factors"
  where "mfa_factors"."user_id" = "users"."id" and "mfa_factors"."confirmed_at" is not null
  limit 1) as "confirmed_factor" on true
  left join lateral (select true as "caller__row", "requested_rows".*
  from (select *
  from "mfa_factors"
  where "user_id" = $2 and "id" = $3) as "requested_rows") as "requested" on true
  where "users"."id" = $4;
select * from "mfa_factors" where "user_id" = $1 and "id" = $2;

-- src/mfa/factor-repository.ts: insertFactor({ id: '00000000-0000-4000-8000-000000000099', user_id: '00000000-0000-4000-8000-000000000001', type: 'totp', name: 'Tablet', totp_secret: 'SECRET2', totp_last_step: null, credential_id: null, public_key: null, sign_count: 0, transports: null, confirmed_at: null, created_at: '2026-01-01T00:00:00.000Z' })
insert into "mfa_factors" ("id", "user_id", "type", "name", "totp_secret", "totp_last_step", "credential_id", "public_key", "sign_count", "transports", "confirmed_at", "created_at") values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
  returning *;

-- src/mfa/factor-repository.ts: factorsOfUser('00000000-0000-4000-8000-000000000001', { type: 'totp' })
select *
  from "mfa_factors"
  where "user_id" = $1 and "type" = $2 and "confirmed_at" is not null
  order by "created_at", "id";

-- src/mfa/factor-repository.ts: lockConfirmedFactors('00000000-0000-4000-8000-000000000001', 'totp')
select *
  from "mfa_factors"
  where "user_id" = $1 and "type" = $2 and "confirmed_at" is not null
  order by "id" for update;

-- src/mfa/factor-repository.ts: lockFactor('00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000012')
select * from "mfa_factors" where "id" = $1 and "user_id" = $2 for update;

-- src/mfa/factor-repository.ts: passkeyIsRegistered('credential-1')
select "id" from "mfa_factors" where "credential_id" = $1;

-- src/mfa/factor-repository.ts: findPasskeyHolder('credential-1')
select "user_id"
  from "mfa_factors"
  where "credential_id" = $1 and "type" = $2 and "confirmed_at" is not null;

-- src/mfa/factor-repository.ts: countConfirmedFactors('00000000-0000-4000-8000-000000000001')
select count(*)::integer as "count"
  from "mfa_factors"
  where "user_id" = $1 and "confirmed_at" is not null;

-- src/mfa/factor-repository.ts: markTotpStepUsed('00000000-0000-4000-8000-000000000012', 58000000, false)
update "mfa_factors" set "totp_last_step" = $1, "last_used_at" = $2 where "id" = $3 returning *;

-- src/mfa/factor-repository.ts: markPasskeyUsed('00000000-0000-4000-8000-000000000012', 7)
update "mfa_factors" set "sign_count" = $1, "last_used_at" = $2 where "id" = $3;

-- src/mfa/factor-repository.ts: deleteFactor('00000000-0000-4000-8000-000000000012')
delete from "mfa_factors" where "id" = $1;

-- src/mfa/factor-repository.ts: deleteFactorsOfUser('00000000-0000-4000-8000-000000000001')
delete from "mfa_factors" where "user_id" = $1 returning *;

-- src/mfa/factor-repository.ts: deleteStaleUnconfirmedFactors()
delete from "mfa_factors" where "confirmed_at" is null and "created_at" < now() - interval '1 day';

-- src/mfa/failure-lock-repository.ts: lockFailureCount('00000000-0000-4000-8000-000000000001')
insert into "mfa_failure_locks" ("user_id", "updated_at") values ($1, now())
  on conflict ("user_id") do update set "user_id" = "excluded"."user_id"
  returning "failures", "locks", coalesce(greatest(0, ceil(extract(epoch from locked_until - now())))::integer, 0) as "seconds_locked";

-- src/mfa/failure-lock-repository.ts: countWrongCode('00000000-0000-4000-8000-000000000001')
update "mfa_failure_locks" set "failures" = "failures" + $1, "updated_at" = now()
  where "user_id" = $2
  returning "failures";

-- src/mfa/failure-lock-repository.ts: startLock('00000000-0000-4000-8000-000000000001', { firstSeconds: 60, maxSeconds: 86400 })
update "mfa_failure_locks" set "failures" = $1, "locks" = (case when locked_until < now() - interval '1 day' then 0 else locks end) + 1, "locked_until" = now() + make_interval(secs => least($2 * power(2, least((case when locked_until < now() - interval '1 day' then 0 else locks end), 30)), $3)), "updated_at" = now()
  where "user_id" = $4
  returning "locked_until";

-- src/mfa/failure-lock-repository.ts: resetWrongCodes('00000000-0000-4000-8000-000000000001')
update "mfa_failure_locks" set "failures" = $1, "updated_at" = now()
  where "user_id" = $2 and "failures" > $3;

-- src/mfa/failure-lock-repository.ts: deleteFailureCount('00000000-0000-4000-8000-000000000001')
delete from "mfa_failure_locks" where "user_id" = $1;

-- src/mfa/login-token-repository.ts: insertLoginToken({ tokenHash: 'login-hash-2', userId: '00000000-0000-4000-8000-000000000001', sessionVersion: 0, firstFactor: 'pwd', ttlSeconds: 300 })
insert into "mfa_login_tokens" ("id", "token_hash", "user_id", "session_version", "first_factor", "created_at", "expires_at") values ($1, $2, $3, $4, $5, $6, $7)
  returning *;

-- src/mfa/login-token-repository.ts: findLoginToken('login-hash')
select * from "mfa_login_tokens" where "token_hash" = $1;

-- src/mfa/login-token-repository.ts: lockLoginToken('00000000-0000-4000-8000-000000000013')
select * from "mfa_login_tokens" where "id" = $1 for update;

-- src/mfa/login-token-repository.ts: countLoginTokenFailure('00000000-0000-4000-8000-000000000013')
update "mfa_login_tokens" set "failures" = failures + 1 where "id" = $1;

-- src/mfa/login-token-repository.ts: spendLoginToken('00000000-0000-4000-8000-000000000013')
update "mfa_login_tokens" set "used_at" = $1 where "id" = $2;

-- src/mfa/login-token-repository.ts: deleteExpiredLoginTokens()
delete from "mfa_login_tokens" where "expires_at" < now() - interval '1 hour';

-- src/mfa/recovery-code-repository.ts: replaceRecoveryCodes('00000000-0000-4000-8000-000000000001', ['code-hash-1', 'code-hash-2'])
delete from "mfa_recovery_codes" where "user_id" = $1;
insert into "mfa_recovery_codes" ("id", "user_id", "code_hash", "created_at") values ($1, $2, $3, $4), ($5, $6, $7, $8);

-- src/mfa/recovery-code-repository.ts: spendRecoveryCode('00000000-0000-4000-8000-000000000001', 'code-hash-1')
update "mfa_recovery_codes" set "used_at" = $1
  where "user_id" = $2 and "code_hash" = $3 and "used_at" is null
  returning "id";

-- src/mfa/recovery-code-repository.ts: countRecoveryCodesLeft('00000000-0000-4000-8000-000000000001')
select count(*) as "count" from "mfa_recovery_codes" where "user_id" = $1 and "used_at" is null;

-- src/mfa/recovery-code-repository.ts: deleteRecoveryCodes('00000000-0000-4000-8000-000000000001')
delete from "mfa_recovery_codes" where "user_id" = $1;
