-- Written by `npm run queries` from the code; do not edit. The parameters: $1.. in the order the statement first uses them.

-- The caller alone: a write's first statement in its transaction, or a check of its own (a user's access token)
select 'user' as "caller__kind", "users"."id" as "caller__id", "users"."role" as "caller__role", "users"."status" as "caller__status", (sessions.id is not null and sessions.ended_at is null and sessions.expires_at > now()) as "caller__live", (sessions.last_used_at is null or sessions.last_used_at < now() - interval '1 minute') as "caller__stale", null::text[] as "caller__scopes", null::integer as "caller__rate_limit", null::uuid as "caller__credential", coalesce(confirmed_factor.enrolled, false) as "caller__mfa_enrolled", floor(extract(epoch
  from now() - sessions.mfa_verified_at))::integer as "caller__mfa_age"
  from "users"
  left join "sessions"
  on "sessions"."id" = $1 and "sessions"."user_id" = "users"."id"
  left join lateral (select true as "enrolled"
  from "mfa_factors"
  where "mfa_factors"."user_id" = "users"."id" and "mfa_factors"."confirmed_at" is not null
  limit 1) as "confirmed_factor"
  on true
  where "users"."id" = $2 and "users"."deleted_at" is null;

-- A page beside the caller (here: GET /api/variants): the row number keeps the page's order
select "caller".*, "requested".*
  from (select 'user' as "caller__kind", "users"."id" as "caller__id", "users"."role" as "caller__role", "users"."status" as "caller__status", (sessions.id is not null and sessions.ended_at is null and sessions.expires_at > now()) as "caller__live", (sessions.last_used_at is null or sessions.last_used_at < now() - interval '1 minute') as "caller__stale", null::text[] as "caller__scopes", null::integer as "caller__rate_limit", null::uuid as "caller__credential", coalesce(confirmed_factor.enrolled, false) as "caller__mfa_enrolled", floor(extract(epoch
  from now() - sessions.mfa_verified_at))::integer as "caller__mfa_age"
  from "users"
  left join "sessions"
  on "sessions"."id" = $1 and "sessions"."user_id" = "users"."id"
  left join lateral (select true as "enrolled"
  from "mfa_factors"
  where "mfa_factors"."user_id" = "users"."id" and "mfa_factors"."confirmed_at" is not null
  limit 1) as "confirmed_factor"
  on true
  where "users"."id" = $2 and "users"."deleted_at" is null) as "caller"
  left join lateral (select row_number() over () as "caller__row", "requested_rows".*
  from (select *
  from "variants"
  order by "created_at" desc, "id" desc
  limit $3) as "requested_rows") as "requested"
  on caller.caller__status = 'active' and caller.caller__live and (caller.caller__role = any($4::text[]) or caller.caller__id = $5::uuid or caller.caller__scopes && $6::text[])
          and (caller.caller__mfa_enrolled or not coalesce(caller.caller__role = any($7::text[]), false))
          and (not caller.caller__mfa_enrolled or coalesce(caller.caller__mfa_age, 2147483647) <= coalesce($8::integer, 2147483647))
  order by "requested"."caller__row";

-- The caller alone, for an API client's secret sent as the bearer token
select 'client' as "caller__kind", "api_clients"."id" as "caller__id", null::text as "caller__role", "api_clients"."status" as "caller__status", (api_client_secrets.deleted_at is null and (api_client_secrets.expires_at is null or api_client_secrets.expires_at > now()) and api_clients.deleted_at is null) as "caller__live", ((api_clients.last_used_at is null or api_clients.last_used_at < now() - interval '1 minute') or api_client_secrets.last_used_at is null or api_client_secrets.last_used_at < now() - interval '1 minute') as "caller__stale", "api_clients"."scopes" as "caller__scopes", "api_clients"."rate_limit" as "caller__rate_limit", "api_client_secrets"."id" as "caller__credential", false as "caller__mfa_enrolled", null::integer as "caller__mfa_age"
  from "api_client_secrets"
  inner join "api_clients"
  on "api_clients"."id" = "api_client_secrets"."client_id"
  where "api_client_secrets"."secret_hash" = $1;

-- The caller alone, for an API client's access token (its scopes and the client's, both)
select 'client' as "caller__kind", "api_clients"."id" as "caller__id", null::text as "caller__role", "api_clients"."status" as "caller__status", (api_clients.deleted_at is null and api_clients.token_generation = $1::integer) as "caller__live", (api_clients.last_used_at is null or api_clients.last_used_at < now() - interval '1 minute') as "caller__stale", array(select unnest(api_clients.scopes) intersect select unnest($2::text[])) as "caller__scopes", "api_clients"."rate_limit" as "caller__rate_limit", null::uuid as "caller__credential", false as "caller__mfa_enrolled", null::integer as "caller__mfa_age"
  from "api_clients"
  where "api_clients"."id" = $3;
