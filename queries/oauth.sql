-- Written by `npm run queries` from scripts/query-registry/; do not edit. Each function: the statements its sample sends, in order; parameters as $1.., their values left out.

-- src/oauth/authorization-code-repository.ts: insertAuthorizationCode({ id: '00000000-0000-4000-8000-000000000099', code_hash: 'sha256-hex-of-the-code', client_id: '00000000-0000-4000-8000-000000000005', user_id: '00000000-0000-4000-8000-000000000001', redirect_uri: 'https://shop.example.com/callback', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', nonce: 'n-0S6_WzA2Mj', scopes: ['openid', 'email'], signin_session_id: '00000000-0000-4000-8000-000000000002', auth_time: '2026-01-01T00:00:00.000Z', amr: ['pwd'], created_at: '2026-01-01T00:00:00.000Z', expires_at: '2026-01-01T00:00:00.000Z' })
insert into "authorization_codes" ("id", "code_hash", "client_id", "user_id", "redirect_uri", "code_challenge", "nonce", "scopes", "signin_session_id", "auth_time", "amr", "created_at", "expires_at") values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13);

-- src/oauth/authorization-code-repository.ts: deleteLapsedAuthorizationCodes()
delete from "authorization_codes" where "expires_at" < now() - interval '1 day';

-- src/oauth/authorization-code-repository.ts: lockAuthorizationCode('sha256-hex-of-the-code')
select * from "authorization_codes" where "code_hash" = $1 for update;

-- src/oauth/authorization-code-repository.ts: markAuthorizationCodeUsed('00000000-0000-4000-8000-000000000099', '00000000-0000-4000-8000-000000000002')
update "authorization_codes" set "used_at" = $1, "session_id" = $2 where "id" = $3;

-- src/oauth/consent-repository.ts: findConsent('00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000005')
select * from "app_consents" where "user_id" = $1 and "client_id" = $2;

-- src/oauth/consent-repository.ts: findConsentForShare('00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000005')
select * from "app_consents" where "user_id" = $1 and "client_id" = $2 for share;

-- src/oauth/consent-repository.ts: upsertConsent({ user_id: '00000000-0000-4000-8000-000000000001', client_id: '00000000-0000-4000-8000-000000000005', scopes: ['openid', 'email'], granted_at: '2026-01-01T00:00:00.000Z' })
insert into "app_consents" ("user_id", "client_id", "scopes", "granted_at") values ($1, $2, $3, $4)
  on conflict ("user_id", "client_id") do update set "scopes" = $5, "granted_at" = $6
  returning *;

-- src/oauth/consent-repository.ts: consentsOfUser('00000000-0000-4000-8000-000000000001')
select "app_consents"."client_id", "api_clients"."name", "api_clients"."logo_uri", "app_consents"."scopes", "app_consents"."granted_at"
  from "app_consents"
  inner join "api_clients" on "api_clients"."id" = "app_consents"."client_id"
  where "app_consents"."user_id" = $1 and "api_clients"."deleted_at" is null
  order by "app_consents"."granted_at" desc, "app_consents"."client_id" desc;

-- src/oauth/consent-repository.ts: deleteConsent('00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000005')
delete from "app_consents" where "user_id" = $1 and "client_id" = $2 returning *;
