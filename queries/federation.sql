-- Written by `npm run queries` from scripts/query-registry/; do not edit. Each function: the statements its sample sends, in order; parameters as $1.., their values left out.

-- src/federation/provider-repository.ts: providersByName(beside a user's caller, then alone: )
select json_build_object('caller__kind', 'user', 'caller__id', "users"."id", 'caller__role', "users"."role", 'caller__status', case when users.deleted_at is null then users.status else 'deleted' end, 'caller__live', (sessions.id is not null and sessions.ended_at is null and sessions.expires_at > now() and sessions.client_id is null), 'caller__stale', (sessions.last_used_at is null or sessions.last_used_at < now() - interval '1 minute'), 'caller__scopes', null::text[], 'caller__rate_limit', null::integer, 'caller__credential', null::uuid, 'caller__mfa_enrolled', coalesce(confirmed_factor.enrolled, false), 'caller__mfa_age', floor(extract(epoch from now() - sessions.mfa_verified_at))::integer) as "caller__columns", "requested".*
  from "users"
  left join "sessions" on "sessions"."id" = $1 and "sessions"."user_id" = "users"."id"
  left join lateral (select true as "enrolled"
  from "mfa_factors"
  where "mfa_factors"."user_id" = "users"."id" and "mfa_factors"."confirmed_at" is not null
  limit 1) as "confirmed_factor" on true
  left join lateral (select true as "caller__row", "requested_rows".*
  from (select *
  from "identity_providers"
  order by lower(name), "id") as "requested_rows") as "requested" on true
  where "users"."id" = $2;
select * from "identity_providers" order by lower(name), "id";

-- src/federation/provider-repository.ts: providerById(beside a user's caller, then alone: '00000000-0000-4000-8000-000000000017')
select json_build_object('caller__kind', 'user', 'caller__id', "users"."id", 'caller__role', "users"."role", 'caller__status', case when users.deleted_at is null then users.status else 'deleted' end, 'caller__live', (sessions.id is not null and sessions.ended_at is null and sessions.expires_at > now() and sessions.client_id is null), 'caller__stale', (sessions.last_used_at is null or sessions.last_used_at < now() - interval '1 minute'), 'caller__scopes', null::text[], 'caller__rate_limit', null::integer, 'caller__credential', null::uuid, 'caller__mfa_enrolled', coalesce(confirmed_factor.enrolled, false), 'caller__mfa_age', floor(extract(epoch from now() - sessions.mfa_verified_at))::integer) as "caller__columns", "requested".*
  from "users"
  left join "sessions" on "sessions"."id" = $1 and "sessions"."user_id" = "users"."id"
  left join lateral (select true as "enrolled"
  from "mfa_factors"
  where "mfa_factors"."user_id" = "users"."id" and "mfa_factors"."confirmed_at" is not null
  limit 1) as "confirmed_factor" on true
  left join lateral (select true as "caller__row", "requested_rows".*
  from (select *
  from "identity_providers"
  where "id" = $2) as "requested_rows") as "requested" on true
  where "users"."id" = $3;
select * from "identity_providers" where "id" = $1;

-- src/federation/provider-repository.ts: lockProvider('00000000-0000-4000-8000-000000000017')
select * from "identity_providers" where "id" = $1 for update;

-- src/federation/provider-repository.ts: insertProvider({ id: '00000000-0000-4000-8000-000000000099', name: 'Apple', issuer: 'https://appleid.apple.com', client_id: 'com.example.shop.signin', client_secret: null, scopes: ['openid', 'email'], button_label: 'Sign in with Apple', apple_team_id: 'TEAM123456', apple_key_id: 'KEY1234567', apple_private_key: 'sealed', discovery: '{}', discovered_at: '2026-01-01T00:00:00.000Z', discovery_attempted_at: '2026-01-01T00:00:00.000Z', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' })
insert into "identity_providers" ("id", "name", "issuer", "client_id", "client_secret", "scopes", "button_label", "apple_team_id", "apple_key_id", "apple_private_key", "discovery", "discovered_at", "discovery_attempted_at", "created_at", "updated_at") values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
  returning *;

-- src/federation/provider-repository.ts: updateProvider('00000000-0000-4000-8000-000000000017', { enabled: false, client_secret: 'sealed-again' })
update "identity_providers" set "enabled" = $1, "client_secret" = $2, "version" = version + 1, "updated_at" = $3
  where "id" = $4
  returning *;

-- src/federation/provider-repository.ts: deleteProvider('00000000-0000-4000-8000-000000000017')
delete from "identity_providers" where "id" = $1;

-- src/federation/provider-repository.ts: claimProviderDueForDiscovery('2026-01-01T00:00:00.000Z')
update "identity_providers" set "discovery_attempted_at" = $1
  where "id" = (select "id"
  from "identity_providers"
  where "enabled" = $2 and "discovery_attempted_at" < $3
  order by "discovery_attempted_at"
  limit $4 for update skip locked)
  returning "id", "issuer", "client_id";

-- src/federation/provider-repository.ts: storeRereadDiscovery('00000000-0000-4000-8000-000000000017', 'https://accounts.google.com', { issuer: 'https://accounts.google.com' })
update "identity_providers" set "discovery" = $1, "discovered_at" = $2
  where "id" = $3 and "issuer" = $4;

-- src/federation/provider-repository.ts: enabledProviderById('00000000-0000-4000-8000-000000000017')
select * from "identity_providers" where "id" = $1 and "enabled" = $2;

-- src/federation/provider-repository.ts: enabledProviderButtons()
select "id", "button_label", discovery ->> 'authorization_endpoint' as "authorization_endpoint"
  from "identity_providers"
  where "enabled" = $1
  order by lower(button_label), "id";

-- src/federation/provider-repository.ts: connectableProviders()
select "id", "name", "button_label"
  from "identity_providers"
  where "enabled" = $1
  order by lower(button_label), "id";

-- src/federation/provider-repository.ts: shareEnabledProvider('00000000-0000-4000-8000-000000000017')
select "name" from "identity_providers" where "id" = $1 and "enabled" = $2 for key share;

-- src/federation/identity-repository.ts: identitiesOfUser('00000000-0000-4000-8000-000000000001')
select "user_identities"."id", "user_identities"."provider_id", "identity_providers"."name" as "provider_name", "user_identities"."email", "user_identities"."linked_at", "user_identities"."last_used_at"
  from "user_identities"
  inner join "identity_providers" on "identity_providers"."id" = "user_identities"."provider_id"
  where "user_identities"."user_id" = $1
  order by "user_identities"."linked_at", "user_identities"."id";

-- src/federation/identity-repository.ts: insertIdentity({ id: '00000000-0000-4000-8000-000000000099', user_id: '00000000-0000-4000-8000-000000000001', provider_id: '00000000-0000-4000-8000-000000000017', subject: 'another-sub', email: null, linked_at: '2026-01-01T00:00:00.000Z' })
insert into "user_identities" ("id", "user_id", "provider_id", "subject", "email", "linked_at") values ($1, $2, $3, $4, $5, $6)
  returning *;

-- src/federation/identity-repository.ts: deleteIdentityOfUser('00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000018')
delete from "user_identities" where "id" = $1 and "user_id" = $2 returning *;

-- src/federation/identity-repository.ts: deleteIdentitiesOfUser('00000000-0000-4000-8000-000000000001')
delete from "user_identities" where "user_id" = $1;

-- src/federation/identity-repository.ts: countIdentitiesOfProvider('00000000-0000-4000-8000-000000000017')
select count(*) as "count" from "user_identities" where "provider_id" = $1;

-- src/federation/identity-repository.ts: lockIdentitySubject('00000000-0000-4000-8000-000000000017', 'a-sub')
select pg_advisory_xact_lock(hashtextextended($1, 0));

-- src/federation/identity-repository.ts: lockIdentityBySubject('00000000-0000-4000-8000-000000000017', 'a-sub')
select * from "user_identities" where "provider_id" = $1 and "subject" = $2 for update;

-- src/federation/identity-repository.ts: markIdentityUsed('00000000-0000-4000-8000-000000000018')
update "user_identities" set "last_used_at" = $1 where "id" = $2;

-- src/federation/federated-signin-repository.ts: insertFederatedSignIn({ id: '00000000-0000-4000-8000-000000000099', provider_id: '00000000-0000-4000-8000-000000000017', state_hash: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', nonce: 'a-nonce', code_verifier: 'a-verifier', browser_hash: 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', authorization_query: '?client_id=app', created_at: '2026-01-01T00:00:00.000Z', expires_at: '2026-01-01T00:00:00.000Z' })
insert into "federated_sign_ins" ("id", "provider_id", "state_hash", "nonce", "code_verifier", "browser_hash", "authorization_query", "created_at", "expires_at") values ($1, $2, $3, $4, $5, $6, $7, $8, $9);

-- src/federation/federated-signin-repository.ts: spendFederatedSignIn({ stateHash: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', providerId: '00000000-0000-4000-8000-000000000017', browserHash: 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb' })
update "federated_sign_ins" set "used_at" = $1
  where "state_hash" = $2 and "provider_id" = $3 and "browser_hash" = $4 and "used_at" is null and "expires_at" > $5
  returning *;

-- src/federation/federated-signin-repository.ts: deleteStaleFederatedSignIns('2026-01-01T00:00:00.000Z')
delete from "federated_sign_ins" where "expires_at" < $1;
