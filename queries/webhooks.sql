-- Written by `npm run queries` from the code; do not edit. The parameters: $1.. in the order the statement first uses them.

-- byId: the data beside a user's caller row (callerRead 'webhooks.byId')
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
  left join lateral (select true as "caller__row", "requested_rows".*
  from (select *
  from "webhooks"
  where "id" = $3) as "requested_rows") as "requested"
  on caller.caller__status = 'active' and caller.caller__live and (caller.caller__role = any($4::text[]) or caller.caller__id = $5::uuid or caller.caller__scopes && $6::text[])
          and (caller.caller__mfa_enrolled or not coalesce(caller.caller__role = any($7::text[]), false))
          and (not caller.caller__mfa_enrolled or coalesce(caller.caller__mfa_age, 2147483647) <= coalesce($8::integer, 2147483647));

-- byId, alone: once an earlier statement of the same request admitted its caller
select *
  from "webhooks"
  where "id" = $1;
