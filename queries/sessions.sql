-- Written by `npm run queries` from scripts/query-registry/; do not edit. Each function: the statements its sample sends, in order; parameters as $1.., their values left out.

-- src/sessions/caller-query.ts: besideCaller(a user, an app's user, a client secret, a client token; variantsPage(…, {}, { limit: 20 }), ordered)
select json_build_object('caller__kind', 'user', 'caller__id', "users"."id", 'caller__role', "users"."role", 'caller__status', case when users.deleted_at is null then users.status else 'deleted' end, 'caller__live', (sessions.id is not null and sessions.ended_at is null and sessions.expires_at > now() and sessions.client_id is null), 'caller__stale', (sessions.last_used_at is null or sessions.last_used_at < now() - interval '1 minute'), 'caller__scopes', null::text[], 'caller__rate_limit', null::integer, 'caller__credential', null::uuid, 'caller__mfa_enrolled', coalesce(confirmed_factor.enrolled, false), 'caller__mfa_age', floor(extract(epoch from now() - sessions.mfa_verified_at))::integer) as "caller__columns", "requested".*
  from "users"
  left join "sessions" on "sessions"."id" = $1 and "sessions"."user_id" = "users"."id"
  left join lateral (select true as "enrolled"
  from "mfa_factors"
  where "mfa_factors"."user_id" = "users"."id" and "mfa_factors"."confirmed_at" is not null
  limit 1) as "confirmed_factor" on true
  left join lateral (select row_number() over () as "caller__row", "requested_rows".*
  from (select *
  from "variants"
  order by "created_at" desc, "id" desc
  limit $2) as "requested_rows") as "requested" on true
  where "users"."id" = $3
  order by "requested"."caller__row";
select json_build_object('caller__kind', 'user', 'caller__id', "users"."id", 'caller__role', "users"."role", 'caller__status', case when users.deleted_at is null then users.status else 'deleted' end, 'caller__live', (sessions.id is not null and sessions.ended_at is null and sessions.expires_at > now()
  and api_clients.deleted_at is null and api_clients.status = 'active' and api_clients.type <> 'service'), 'caller__stale', (sessions.last_used_at is null or sessions.last_used_at < now() - interval '1 minute'), 'caller__scopes', array(select unnest(coalesce(api_clients.scopes, '{}')) intersect select unnest($1::text[])), 'caller__rate_limit', null::integer, 'caller__credential', null::uuid, 'caller__mfa_enrolled', coalesce(confirmed_factor.enrolled, false), 'caller__mfa_age', floor(extract(epoch from now() - sessions.mfa_verified_at))::integer) as "caller__columns", "requested".*
    from "users"
    left join "sessions" on "sessions"."id" = $2 and "sessions"."user_id" = "users"."id" and "sessions"."client_id" = $3
    left join "api_clients" on "api_clients"."id" = "sessions"."client_id"
    left join lateral (select true as "enrolled"
    from "mfa_factors"
    where "mfa_factors"."user_id" = "users"."id" and "mfa_factors"."confirmed_at" is not null
    limit 1) as "confirmed_factor" on true
    left join lateral (select row_number() over () as "caller__row", "requested_rows".*
    from (select *
    from "variants"
    order by "created_at" desc, "id" desc
    limit $4) as "requested_rows") as "requested" on true
    where "users"."id" = $5
    order by "requested"."caller__row";
select json_build_object('caller__kind', 'client', 'caller__id', "api_clients"."id", 'caller__role', null::text, 'caller__status', "api_clients"."status", 'caller__live', (api_client_secrets.deleted_at is null and (api_client_secrets.expires_at is null or api_client_secrets.expires_at > now()) and api_clients.deleted_at is null and api_clients.type = 'service'), 'caller__stale', ((api_clients.last_used_at is null or api_clients.last_used_at < now() - interval '1 minute') or api_client_secrets.last_used_at is null or api_client_secrets.last_used_at < now() - interval '1 minute'), 'caller__scopes', "api_clients"."scopes", 'caller__rate_limit', "api_clients"."rate_limit", 'caller__credential', "api_client_secrets"."id", 'caller__mfa_enrolled', false, 'caller__mfa_age', null::integer) as "caller__columns", "requested".*
  from "api_client_secrets"
  inner join "api_clients" on "api_clients"."id" = "api_client_secrets"."client_id"
  left join lateral (select row_number() over () as "caller__row", "requested_rows".*
  from (select *
  from "variants"
  order by "created_at" desc, "id" desc
  limit $1) as "requested_rows") as "requested" on true
  where "api_client_secrets"."secret_hash" = $2
  order by "requested"."caller__row";
select json_build_object('caller__kind', 'client', 'caller__id', "api_clients"."id", 'caller__role', null::text, 'caller__status', "api_clients"."status", 'caller__live', (api_clients.deleted_at is null and api_clients.token_generation = $1::integer and api_clients.type = 'service'), 'caller__stale', (api_clients.last_used_at is null or api_clients.last_used_at < now() - interval '1 minute'), 'caller__scopes', array(select unnest(api_clients.scopes) intersect select unnest($2::text[])), 'caller__rate_limit', "api_clients"."rate_limit", 'caller__credential', null::uuid, 'caller__mfa_enrolled', false, 'caller__mfa_age', null::integer) as "caller__columns", "requested".*
  from "api_clients"
  left join lateral (select row_number() over () as "caller__row", "requested_rows".*
  from (select *
  from "variants"
  order by "created_at" desc, "id" desc
  limit $3) as "requested_rows") as "requested" on true
  where "api_clients"."id" = $4
  order by "requested"."caller__row";

-- src/sessions/caller-query.ts: callerAlone(a user, an app's user, a client secret, a client token)
select 'user' as "caller__kind", "users"."id" as "caller__id", "users"."role" as "caller__role", case when users.deleted_at is null then users.status else 'deleted' end as "caller__status", (sessions.id is not null and sessions.ended_at is null and sessions.expires_at > now() and sessions.client_id is null) as "caller__live", (sessions.last_used_at is null or sessions.last_used_at < now() - interval '1 minute') as "caller__stale", null::text[] as "caller__scopes", null::integer as "caller__rate_limit", null::uuid as "caller__credential", coalesce(confirmed_factor.enrolled, false) as "caller__mfa_enrolled", floor(extract(epoch from now() - sessions.mfa_verified_at))::integer as "caller__mfa_age"
  from "users"
  left join "sessions" on "sessions"."id" = $1 and "sessions"."user_id" = "users"."id"
  left join lateral (select true as "enrolled"
  from "mfa_factors"
  where "mfa_factors"."user_id" = "users"."id" and "mfa_factors"."confirmed_at" is not null
  limit 1) as "confirmed_factor" on true
  where "users"."id" = $2;
select 'user' as "caller__kind", "users"."id" as "caller__id", "users"."role" as "caller__role", case when users.deleted_at is null then users.status else 'deleted' end as "caller__status", (sessions.id is not null and sessions.ended_at is null and sessions.expires_at > now()
  and api_clients.deleted_at is null and api_clients.status = 'active' and api_clients.type <> 'service') as "caller__live", (sessions.last_used_at is null or sessions.last_used_at < now() - interval '1 minute') as "caller__stale", array(select unnest(coalesce(api_clients.scopes, '{}')) intersect select unnest($1::text[])) as "caller__scopes", null::integer as "caller__rate_limit", null::uuid as "caller__credential", coalesce(confirmed_factor.enrolled, false) as "caller__mfa_enrolled", floor(extract(epoch from now() - sessions.mfa_verified_at))::integer as "caller__mfa_age"
    from "users"
    left join "sessions" on "sessions"."id" = $2 and "sessions"."user_id" = "users"."id" and "sessions"."client_id" = $3
    left join "api_clients" on "api_clients"."id" = "sessions"."client_id"
    left join lateral (select true as "enrolled"
    from "mfa_factors"
    where "mfa_factors"."user_id" = "users"."id" and "mfa_factors"."confirmed_at" is not null
    limit 1) as "confirmed_factor" on true
    where "users"."id" = $4;
select 'client' as "caller__kind", "api_clients"."id" as "caller__id", null::text as "caller__role", "api_clients"."status" as "caller__status", (api_client_secrets.deleted_at is null and (api_client_secrets.expires_at is null or api_client_secrets.expires_at > now()) and api_clients.deleted_at is null and api_clients.type = 'service') as "caller__live", ((api_clients.last_used_at is null or api_clients.last_used_at < now() - interval '1 minute') or api_client_secrets.last_used_at is null or api_client_secrets.last_used_at < now() - interval '1 minute') as "caller__stale", "api_clients"."scopes" as "caller__scopes", "api_clients"."rate_limit" as "caller__rate_limit", "api_client_secrets"."id" as "caller__credential", false as "caller__mfa_enrolled", null::integer as "caller__mfa_age"
  from "api_client_secrets"
  inner join "api_clients" on "api_clients"."id" = "api_client_secrets"."client_id"
  where "api_client_secrets"."secret_hash" = $1;
select 'client' as "caller__kind", "api_clients"."id" as "caller__id", null::text as "caller__role", "api_clients"."status" as "caller__status", (api_clients.deleted_at is null and api_clients.token_generation = $1::integer and api_clients.type = 'service') as "caller__live", (api_clients.last_used_at is null or api_clients.last_used_at < now() - interval '1 minute') as "caller__stale", array(select unnest(api_clients.scopes) intersect select unnest($2::text[])) as "caller__scopes", "api_clients"."rate_limit" as "caller__rate_limit", null::uuid as "caller__credential", false as "caller__mfa_enrolled", null::integer as "caller__mfa_age"
  from "api_clients"
  where "api_clients"."id" = $3;

-- src/sessions/caller-query.ts: findUserStanding('00000000-0000-4000-8000-000000000001')
select "id", "role", "status" from "users" where "id" = $1 and "deleted_at" is null;

-- src/sessions/refresh-token-repository.ts: insertRefreshToken({ userId: '00000000-0000-4000-8000-000000000001', familyId: '00000000-0000-4000-8000-000000000002', tokenHash: 'refresh-hash-2', expiresAt: '2026-01-01T00:00:00.000Z' })
insert into "refresh_tokens" ("id", "user_id", "family_id", "token_hash", "expires_at", "created_at") values ($1, $2, $3, $4, $5, $6);

-- src/sessions/refresh-token-repository.ts: findRefreshToken('refresh-hash')
select * from "refresh_tokens" where "token_hash" = $1;

-- src/sessions/refresh-token-repository.ts: findRefreshTokenForUpdate('refresh-hash')
select * from "refresh_tokens" where "token_hash" = $1 for update;

-- src/sessions/refresh-token-repository.ts: markRefreshTokenRotated('00000000-0000-4000-8000-000000000099', 'sealed-successor')
update "refresh_tokens" set "used_at" = $1, "successor_sealed" = $2 where "id" = $3;

-- src/sessions/refresh-token-repository.ts: deleteExpiredRefreshTokens()
delete from "refresh_tokens" where "expires_at" < $1;

-- src/sessions/session-repository.ts: insertSession({ id: '00000000-0000-4000-8000-000000000099', user_id: '00000000-0000-4000-8000-000000000001', created_at: '2026-01-01T00:00:00.000Z', last_used_at: '2026-01-01T00:00:00.000Z', expires_at: '2026-01-01T00:00:00.000Z', user_agent: 'curl/8', ip: '192.0.2.1', amr: ['pwd'], auth_time: '2026-01-01T00:00:00.000Z', mfa_verified_at: null })
insert into "sessions" ("id", "user_id", "created_at", "last_used_at", "expires_at", "user_agent", "ip", "amr", "auth_time", "mfa_verified_at") values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
  returning *;

-- src/sessions/session-repository.ts: findSession('00000000-0000-4000-8000-000000000002')
select * from "sessions" where "id" = $1;

-- src/sessions/session-repository.ts: findSessionForUpdate('00000000-0000-4000-8000-000000000002')
select * from "sessions" where "id" = $1 for update;

-- src/sessions/session-repository.ts: activeSessions('00000000-0000-4000-8000-000000000001')
select *
  from "sessions"
  where "user_id" = $1 and "ended_at" is null and "expires_at" > $2
  order by "created_at" desc, "id" desc;

-- src/sessions/session-repository.ts: listActiveSessions('00000000-0000-4000-8000-000000000001')
select *
  from "sessions"
  where "user_id" = $1 and "ended_at" is null and "expires_at" > $2
  order by "created_at" desc, "id" desc;

-- src/sessions/session-repository.ts: endSessions({ userId: '00000000-0000-4000-8000-000000000001', sessionId: '00000000-0000-4000-8000-000000000002' })
update "sessions" set "ended_at" = $1
  where "user_id" = $2 and "ended_at" is null and "id" = $3
  returning "id";
update "refresh_tokens" set "revoked_at" = $1 where "family_id" in ($2) and "revoked_at" is null;

-- src/sessions/session-repository.ts: endSessionsOfApp('00000000-0000-4000-8000-000000000005')
update "sessions" set "ended_at" = $1 where "client_id" = $2 and "ended_at" is null returning "id";

-- src/sessions/session-repository.ts: extendSession('00000000-0000-4000-8000-000000000002', '2026-01-01T00:00:00.000Z')
update "sessions" set "expires_at" = $1, "last_used_at" = $2 where "id" = $3;

-- src/sessions/session-repository.ts: touchSession('00000000-0000-4000-8000-000000000002')
update sessions set last_used_at = now()
  where id = $1 and last_used_at < now() - interval '1 minute';

-- src/sessions/session-repository.ts: markSecondFactorVerified('00000000-0000-4000-8000-000000000002')
update "sessions" set "mfa_verified_at" = $1 where "id" = $2 returning "mfa_verified_at";

-- src/sessions/session-repository.ts: allSessionsOfUserPage('00000000-0000-4000-8000-000000000001', { limit: 20 })
select * from "sessions" where "user_id" = $1 order by "created_at" asc, "id" asc limit $2;

-- src/sessions/session-repository.ts: deleteSessionsOfUser('00000000-0000-4000-8000-000000000001')
delete from "refresh_tokens" where "user_id" = $1;
delete from "sessions" where "user_id" = $1;

-- src/sessions/session-repository.ts: purgeSessionsEndedBefore('2026-01-01T00:00:00.000Z')
with gone as (
    delete from sessions
    where id in (select id from sessions where ended_at < $1 or expires_at < $2 limit $3)
    returning id
  ), tokens as (
    delete from refresh_tokens where family_id in (select id from gone)
  )
  select id from gone;

-- src/sessions/session-repository.ts: findLiveSigninSession('browser-secret-hash')
select "sessions"."id", "sessions"."user_id", "sessions"."auth_time", "sessions"."amr", "users"."email"
  from "sessions"
  inner join "users" on "users"."id" = "sessions"."user_id"
  where "sessions"."browser_secret_hash" = $1 and "sessions"."ended_at" is null and "sessions"."expires_at" > $2 and "users"."status" = $3 and "users"."deleted_at" is null;

-- src/sessions/signing-key-repository.ts: liveSigningKeys()
select *
  from "signing_keys"
  where ("retires_at" is null or "retires_at" > $1)
  order by "created_at" desc, "alg";

-- src/sessions/signing-key-repository.ts: listLiveSigningKeys()
select *
  from "signing_keys"
  where ("retires_at" is null or "retires_at" > $1)
  order by "created_at" desc, "alg";

-- src/sessions/signing-key-repository.ts: findActiveSigningKeys()
select * from "signing_keys" where "status" = $1 order by "alg" for update;

-- src/sessions/signing-key-repository.ts: insertSigningKey(secrets kept as they are)
insert into "signing_keys" ("kid", "alg", "public_jwk", "private_pem", "status", "created_at", "retires_at") values ($1, $2, $3, $4, $5, $6, $7)
  returning *;

-- src/sessions/signing-key-repository.ts: listStoredSigningKeysForUpdate()
select * from "signing_keys" order by "kid" for update;

-- src/sessions/signing-key-repository.ts: storePrivateKey('key-1', 'sealed-pem')
update "signing_keys" set "private_pem" = $1 where "kid" = $2;

-- src/sessions/signing-key-repository.ts: retireSigningKey('key-1', '2026-01-01T00:00:00.000Z')
update "signing_keys" set "status" = $1, "retires_at" = $2 where "kid" = $3;

-- src/sessions/signing-key-repository.ts: deleteRetiredSigningKeys()
delete from "signing_keys" where "retires_at" <= $1;

-- src/sessions/signing-key-repository.ts: lockSigningKeys()
select pg_advisory_xact_lock($1);
