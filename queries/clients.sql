-- Written by `npm run queries` from scripts/query-registry/; do not edit. Each function: the statements its sample sends, in order; parameters as $1.., their values left out.

-- src/clients/client-repository.ts: clientById(beside a user's caller, then alone: '00000000-0000-4000-8000-000000000005')
select json_build_object('caller__kind', 'user', 'caller__id', "users"."id", 'caller__role', "users"."role", 'caller__status', case when users.deleted_at is null then users.status else 'deleted' end, 'caller__live', (sessions.id is not null and sessions.ended_at is null and sessions.expires_at > now() and sessions.client_id is null), 'caller__stale', (sessions.last_used_at is null or sessions.last_used_at < now() - interval '1 minute'), 'caller__scopes', null::text[], 'caller__rate_limit', null::integer, 'caller__credential', null::uuid, 'caller__mfa_enrolled', coalesce(confirmed_factor.enrolled, false), 'caller__mfa_age', floor(extract(epoch from now() - sessions.mfa_verified_at))::integer) as "caller__columns", "requested".*
  from "users"
  left join "sessions" on "sessions"."id" = $1 and "sessions"."user_id" = "users"."id"
  left join lateral (select true as "enrolled"
  from "mfa_factors"
  where "mfa_factors"."user_id" = "users"."id" and "mfa_factors"."confirmed_at" is not null
  limit 1) as "confirmed_factor" on true
  left join lateral (select true as "caller__row", "requested_rows".*
  from (select *
  from "api_clients"
  where "id" = $2 and "deleted_at" is null) as "requested_rows") as "requested" on true
  where "users"."id" = $3;
select * from "api_clients" where "id" = $1 and "deleted_at" is null;

-- src/clients/client-repository.ts: clientsPage({ limit: 20 })
select *
  from "api_clients"
  where "deleted_at" is null
  order by "created_at" desc, "id" desc
  limit $1;

-- src/clients/client-repository.ts: countClients()
select count(*) as "total" from "api_clients" where "deleted_at" is null;

-- src/clients/client-repository.ts: lockClient('00000000-0000-4000-8000-000000000005')
select * from "api_clients" where "id" = $1 and "deleted_at" is null for update;

-- src/clients/client-repository.ts: insertClient({ id: '00000000-0000-4000-8000-000000000099', name: 'Shop web app', description: null, type: 'confidential', scopes: ['openid', 'email'], status: 'active', rate_limit: null, redirect_uris: ['https://shop.example.com/callback'], post_logout_redirect_uris: [], first_party: true, logo_uri: null, id_token_signed_response_alg: 'RS256', created_by: '00000000-0000-4000-8000-000000000001', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' })
insert into "api_clients" ("id", "name", "description", "type", "scopes", "status", "rate_limit", "redirect_uris", "post_logout_redirect_uris", "first_party", "logo_uri", "id_token_signed_response_alg", "created_by", "created_at", "updated_at") values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
  returning *;

-- src/clients/client-repository.ts: updateClient('00000000-0000-4000-8000-000000000005', { name: 'Shop front, renamed' })
update "api_clients" set "name" = $1, "version" = version + 1, "updated_at" = $2
  where "id" = $3
  returning *;

-- src/clients/client-repository.ts: secretsOfClients(['00000000-0000-4000-8000-000000000005'])
select *
  from "api_client_secrets"
  where "client_id" in ($1) and "deleted_at" is null
  order by "created_at" desc, "id" desc;

-- src/clients/client-repository.ts: insertSecret('00000000-0000-4000-8000-000000000005', { hash: 'new-secret-hash', prefix: 'sk_2' })
insert into "api_client_secrets" ("id", "client_id", "secret_hash", "prefix", "created_at", "expires_at", "last_used_at", "deleted_at") values ($1, $2, $3, $4, $5, $6, $7, $8)
  returning *;

-- src/clients/client-repository.ts: expireOtherSecrets('00000000-0000-4000-8000-000000000005', '00000000-0000-4000-8000-000000000006', 3600)
update "api_client_secrets" set "expires_at" = now() + make_interval(secs => $1)
  where "client_id" = $2 and "id" <> $3 and "deleted_at" is null and ("expires_at" is null or "expires_at" > now() + make_interval(secs => $4));

-- src/clients/client-repository.ts: deleteSecrets('00000000-0000-4000-8000-000000000005', '00000000-0000-4000-8000-000000000006')
update "api_client_secrets" set "deleted_at" = $1
  where "client_id" = $2 and "deleted_at" is null and "id" = $3
  returning *;

-- src/clients/client-repository.ts: noteClientUsed('00000000-0000-4000-8000-000000000005', '00000000-0000-4000-8000-000000000006')
update api_clients set last_used_at = now()
  where id = $1 and (last_used_at is null or last_used_at < now() - interval '1 minute');
update api_client_secrets set last_used_at = now()
  where id = $1 and (last_used_at is null or last_used_at < now() - interval '1 minute');

-- src/clients/client-repository.ts: findUsableSecret('secret-hash')
select "api_client_secrets"."id" as "secret_id", "api_client_secrets"."secret_hash", "api_clients"."id" as "client_id", "api_clients"."type", "api_clients"."status", "api_clients"."scopes", "api_clients"."token_generation", "api_clients"."id_token_signed_response_alg", "api_clients"."first_party"
  from "api_client_secrets"
  inner join "api_clients" on "api_clients"."id" = "api_client_secrets"."client_id"
  where "api_client_secrets"."secret_hash" = $1 and "api_client_secrets"."deleted_at" is null and ("api_client_secrets"."expires_at" is null or "api_client_secrets"."expires_at" > now()) and "api_clients"."deleted_at" is null;

-- src/clients/client-repository.ts: findUndeletedClient('00000000-0000-4000-8000-000000000005')
select "id" as "client_id", "type", "status", "scopes", "id_token_signed_response_alg", "first_party", "token_generation"
  from "api_clients"
  where "id" = $1 and "deleted_at" is null;
