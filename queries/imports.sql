-- Written by `npm run queries` from scripts/query-registry/; do not edit. Each function: the statements its sample sends, in order; parameters as $1.., their values left out.

-- src/imports/import-repository.ts: insertImport({ id: '00000000-0000-4000-8000-000000000099', upload_id: '00000000-0000-4000-8000-000000000011', format: 'csv', mode: 'upsert', on_error: 'reject_all', dry_run: false, byte_size: 1, created_by: '00000000-0000-4000-8000-000000000001', actor_type: 'user' })
insert into "variant_imports" ("id", "upload_id", "format", "mode", "on_error", "dry_run", "byte_size", "created_by", "actor_type", "status", "created_at", "next_attempt_at") values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
  returning *;

-- src/imports/import-repository.ts: importById(beside a user's caller, then alone: '00000000-0000-4000-8000-000000000010')
select json_build_object('caller__kind', 'user', 'caller__id', "users"."id", 'caller__role', "users"."role", 'caller__status', case when users.deleted_at is null then users.status else 'deleted' end, 'caller__live', (sessions.id is not null and sessions.ended_at is null and sessions.expires_at > now() and sessions.client_id is null), 'caller__stale', (sessions.last_used_at is null or sessions.last_used_at < now() - interval '1 minute'), 'caller__scopes', null::text[], 'caller__rate_limit', null::integer, 'caller__credential', null::uuid, 'caller__mfa_enrolled', coalesce(confirmed_factor.enrolled, false), 'caller__mfa_age', floor(extract(epoch from now() - sessions.mfa_verified_at))::integer) as "caller__columns", "requested".*
  from "users"
  left join "sessions" on "sessions"."id" = $1 and "sessions"."user_id" = "users"."id"
  left join lateral (select true as "enrolled"
  from "mfa_factors"
  where "mfa_factors"."user_id" = "users"."id" and "mfa_factors"."confirmed_at" is not null
  limit 1) as "confirmed_factor" on true
  left join lateral (select true as "caller__row", "requested_rows".*
  from (select *
  from "variant_imports"
  where "id" = $2) as "requested_rows") as "requested" on true
  where "users"."id" = $3;
select * from "variant_imports" where "id" = $1;

-- src/imports/import-repository.ts: importsPage({ limit: 20 })
select * from "variant_imports" order by "created_at" desc, "id" desc limit $1;

-- src/imports/import-repository.ts: countImports()
select count(*) as "total" from "variant_imports";

-- src/imports/import-repository.ts: lockImportAdmission()
select pg_advisory_xact_lock($1);

-- src/imports/import-repository.ts: countActiveImports()
select count(*) as "total" from "variant_imports" where "status" in ($1, $2);

-- src/imports/import-repository.ts: purgeImportsFinishedBefore('2026-01-01T00:00:00.000Z')
delete from variant_imports
  where id in (
    select id from variant_imports
    where finished_at < $1 and status not in ('pending', 'running')
    limit $2 for update skip locked)
  returning id;

-- src/imports/import-repository.ts: cancelImport('00000000-0000-4000-8000-000000000010')
update "variant_imports" set "status" = $1, "finished_at" = $2
  where "id" = $3 and "status" in ($4, $5)
  returning *;

-- src/imports/import-repository.ts: writeUnderClaim({ id: '00000000-0000-4000-8000-000000000010', claimToken: '00000000-0000-4000-8000-000000000014' }, { rows_processed: 10, first_errors: [{ line: 2, message: 'price: not a number' }] })
update "variant_imports" set "rows_processed" = $1, "first_errors" = $2
  where "id" = $3 and "claim_token" = $4 and "status" in ($5, $6)
  returning "id";

-- src/imports/import-repository.ts: markAbandoned('00000000-0000-4000-8000-000000000010', [{ line: 0, message: 'gave up' }])
update "variant_imports" set "finished_at" = $1, "first_errors" = $2
  where "id" = $3 and "status" = $4
  returning *;

-- src/imports/import-repository.ts: insertImportErrors('00000000-0000-4000-8000-000000000010', [{ line: 2, error: 'price: not a number', fields: { sku: 'SKU-2' } }])
insert into "variant_import_errors" ("import_id", "line", "error", "fields") values ($1, $2, $3, $4)
  on conflict ("import_id", "line") do nothing;

-- src/imports/import-repository.ts: deleteImportErrors('00000000-0000-4000-8000-000000000010')
delete from "variant_import_errors" where "import_id" = $1;

-- src/imports/import-repository.ts: importErrorsAfter('00000000-0000-4000-8000-000000000010', 0, 100)
select "line", "error", "fields"
  from "variant_import_errors"
  where "import_id" = $1 and "line" > $2
  order by "line"
  limit $3;

-- src/imports/import-repository.ts: importErrorColumns('00000000-0000-4000-8000-000000000010')
select distinct jsonb_object_keys(fields) as key from variant_import_errors
  where import_id = $1 and jsonb_typeof(fields) = 'object';

-- src/imports/import-repository.ts: insertUploadPiece('00000000-0000-4000-8000-000000000011', 1, <3 bytes>)
insert into "import_uploads" ("upload_id", "position", "data", "created_at") values ($1, $2, $3, $4);

-- src/imports/import-repository.ts: uploadPieces(() => trx, '00000000-0000-4000-8000-000000000011')
select "data" from "import_uploads" where "upload_id" = $1 and "position" = $2;
select "data" from "import_uploads" where "upload_id" = $1 and "position" = $2;

-- src/imports/import-repository.ts: settleImportRun(the sample import under its claim, done)
update "variant_imports" set "claimed_until" = $1, "claim_token" = $2, "last_error" = $3, "status" = $4
  where "id" = $5 and "claim_token" = $6
  returning "id";

-- src/imports/import-repository.ts: deleteUpload('00000000-0000-4000-8000-000000000011')
delete from "import_uploads" where "upload_id" = $1;

-- src/imports/import-repository.ts: deleteAbandonedUploads()
delete from import_uploads
  where created_at < now() - interval '1 day'
    and not exists (select 1
      from variant_imports
      where variant_imports.upload_id = import_uploads.upload_id and status in ('pending', 'running'));
