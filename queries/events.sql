-- Written by `npm run queries` from scripts/query-registry/; do not edit. Each function: the statements its sample sends, in order; parameters as $1.., their values left out.

-- src/events/event-repository.ts: eventsPage({ types: ['variant.created'], actorType: 'user' }, { limit: 20, after: { createdAt: '2026-01-01T00:00:00.000Z', id: '00000000-0000-4000-8000-000000000099' } })
select *
  from "events"
  where "type" not in ($1) and "type" in ($2) and "actor_type" = $3 and ("created_at", "id") < ($4, $5)
  order by "created_at" desc, "id" desc
  limit $6;

-- src/events/event-repository.ts: countEvents({ types: ['variant.created'], actorType: 'user' })
select count(*) as "total"
  from "events"
  where "type" not in ($1) and "type" in ($2) and "actor_type" = $3;

-- src/events/event-repository.ts: eventById(beside a user's caller, then alone: '00000000-0000-4000-8000-000000000008')
select json_build_object('caller__kind', 'user', 'caller__id', "users"."id", 'caller__role', "users"."role", 'caller__status', case when users.deleted_at is null then users.status else 'deleted' end, 'caller__live', (sessions.id is not null and sessions.ended_at is null and sessions.expires_at > now() and sessions.client_id is null), 'caller__stale', (sessions.last_used_at is null or sessions.last_used_at < now() - interval '1 minute'), 'caller__scopes', null::text[], 'caller__rate_limit', null::integer, 'caller__credential', null::uuid, 'caller__mfa_enrolled', coalesce(confirmed_factor.enrolled, false), 'caller__mfa_age', floor(extract(epoch from now() - sessions.mfa_verified_at))::integer) as "caller__columns", "requested".*
  from "users"
  left join "sessions" on "sessions"."id" = $1 and "sessions"."user_id" = "users"."id"
  left join lateral (select true as "enrolled"
  from "mfa_factors"
  where "mfa_factors"."user_id" = "users"."id" and "mfa_factors"."confirmed_at" is not null
  limit 1) as "confirmed_factor" on true
  left join lateral (select true as "caller__row", "requested_rows".*
  from (select *
  from "events"
  where "id" = $2 and "type" not in ($3)) as "requested_rows") as "requested" on true
  where "users"."id" = $4;
select * from "events" where "id" = $1 and "type" not in ($2);

-- src/events/event-repository.ts: deleteEventsBefore('2026-01-01T00:00:00.000Z')
delete from "events" where "created_at" < $1;

-- src/events/event-repository.ts: subjectEventsPage('00000000-0000-4000-8000-000000000001', { limit: 20 })
select *
  from "events"
  where "type" not in ($1) and "subject_id" = $2
  order by "created_at" asc, "id" asc
  limit $3;

-- src/events/event-repository.ts: actorEventsAboutOthersPage('00000000-0000-4000-8000-000000000001', { limit: 20 })
select *
  from "events"
  where "type" not in ($1) and "actor_id" = $2 and "subject_id" != $3
  order by "created_at" asc, "id" asc
  limit $4;

-- src/events/event-repository.ts: erasePersonalValues('00000000-0000-4000-8000-000000000001')
select * from "events" where "subject_id" = $1 order by "created_at" asc, "id" asc limit $2;
update events set data = scrubbed.data
  from (values ($1::uuid, $2::jsonb)) as scrubbed (id, data)
  where events.id = scrubbed.id;

-- src/events/webhook-repository.ts: webhookById(beside a user's caller, then alone: '00000000-0000-4000-8000-000000000007')
select json_build_object('caller__kind', 'user', 'caller__id', "users"."id", 'caller__role', "users"."role", 'caller__status', case when users.deleted_at is null then users.status else 'deleted' end, 'caller__live', (sessions.id is not null and sessions.ended_at is null and sessions.expires_at > now() and sessions.client_id is null), 'caller__stale', (sessions.last_used_at is null or sessions.last_used_at < now() - interval '1 minute'), 'caller__scopes', null::text[], 'caller__rate_limit', null::integer, 'caller__credential', null::uuid, 'caller__mfa_enrolled', coalesce(confirmed_factor.enrolled, false), 'caller__mfa_age', floor(extract(epoch from now() - sessions.mfa_verified_at))::integer) as "caller__columns", "requested".*
  from "users"
  left join "sessions" on "sessions"."id" = $1 and "sessions"."user_id" = "users"."id"
  left join lateral (select true as "enrolled"
  from "mfa_factors"
  where "mfa_factors"."user_id" = "users"."id" and "mfa_factors"."confirmed_at" is not null
  limit 1) as "confirmed_factor" on true
  left join lateral (select true as "caller__row", "requested_rows".*
  from (select *
  from "webhooks"
  where "id" = $2) as "requested_rows") as "requested" on true
  where "users"."id" = $3;
select * from "webhooks" where "id" = $1;

-- src/events/webhook-repository.ts: settleDelivery(the sample delivery under its claim, a retry in 60 s)
update "webhook_deliveries" set "claimed_until" = $1, "claim_token" = $2, "last_error" = $3, "next_attempt_at" = now() + make_interval(secs => $4), "status" = $5
  where "id" = $6 and "claim_token" = $7
  returning "id";

-- src/events/webhook-repository.ts: findWebhookByIdForUpdate('00000000-0000-4000-8000-000000000007')
select * from "webhooks" where "id" = $1 for update;

-- src/events/webhook-repository.ts: insertWebhook({ id: '00000000-0000-4000-8000-000000000099', url: 'https://example.com/other', events: ['variant.updated'], description: null, enabled: true, secret: 'whsec-2', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' })
insert into "webhooks" ("id", "url", "events", "description", "enabled", "secret", "created_at", "updated_at") values ($1, $2, $3, $4, $5, $6, $7, $8)
  returning *;

-- src/events/webhook-repository.ts: updateWebhook('00000000-0000-4000-8000-000000000007', { enabled: false })
update "webhooks" set "enabled" = $1, "version" = version + 1, "updated_at" = $2
  where "id" = $3
  returning *;

-- src/events/webhook-repository.ts: deleteWebhook('00000000-0000-4000-8000-000000000007')
delete from "webhooks" where "id" = $1;

-- src/events/webhook-repository.ts: webhooksPage({ limit: 20 })
select * from "webhooks" order by "created_at" desc, "id" desc limit $1;

-- src/events/webhook-repository.ts: countWebhooks()
select count(*) as "total" from "webhooks";

-- src/events/webhook-repository.ts: countDeliveries('00000000-0000-4000-8000-000000000007')
select count(*) as "total" from "webhook_deliveries" where "webhook_id" = $1;

-- src/events/webhook-repository.ts: deliveriesPage('00000000-0000-4000-8000-000000000007', { limit: 20, after: { createdAt: '2026-01-01T00:00:00.000Z', id: '00000000-0000-4000-8000-000000000099' } })
select "webhook_deliveries".*, "events"."type" as "event_type"
  from "webhook_deliveries"
  inner join "events" on "events"."id" = "webhook_deliveries"."event_id"
  where "webhook_deliveries"."webhook_id" = $1 and ("webhook_deliveries"."created_at", "webhook_deliveries"."id") < ($2, $3)
  order by "webhook_deliveries"."created_at" desc, "webhook_deliveries"."id" desc
  limit $4;

-- src/events/webhook-repository.ts: findDelivery('00000000-0000-4000-8000-000000000007', '00000000-0000-4000-8000-000000000009')
select "webhook_deliveries".*, "events"."type" as "event_type"
  from "webhook_deliveries"
  inner join "events" on "events"."id" = "webhook_deliveries"."event_id"
  where "webhook_deliveries"."webhook_id" = $1 and "webhook_deliveries"."id" = $2;

-- src/events/webhook-repository.ts: lockDelivery('00000000-0000-4000-8000-000000000007', '00000000-0000-4000-8000-000000000009')
select * from "webhook_deliveries" where "webhook_id" = $1 and "id" = $2 for update;

-- src/events/webhook-repository.ts: requeueDelivery('00000000-0000-4000-8000-000000000009')
update "webhook_deliveries" set "status" = $1, "next_attempt_at" = now()
  where "id" = $2 and ("claimed_until" is null or "claimed_until" <= now());
