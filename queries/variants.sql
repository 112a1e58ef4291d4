-- Written by `npm run queries` from scripts/query-registry/; do not edit. Each function: the statements its sample sends, in order; parameters as $1.., their values left out.

-- src/variants/variant-repository.ts: variantById(beside a user's caller, then alone: '00000000-0000-4000-8000-000000000003')
select json_build_object('caller__kind', 'user', 'caller__id', "users"."id", 'caller__role', "users"."role", 'caller__status', case when users.deleted_at is null then users.status else 'deleted' end, 'caller__live', (sessions.id is not null and sessions.ended_at is null and sessions.expires_at > now() and sessions.client_id is null), 'caller__stale', (sessions.last_used_at is null or sessions.last_used_at < now() - interval '1 minute'), 'caller__scopes', null::text[], 'caller__rate_limit', null::integer, 'caller__credential', null::uuid, 'caller__mfa_enrolled', coalesce(confirmed_factor.enrolled, false), 'caller__mfa_age', floor(extract(epoch from now() - sessions.mfa_verified_at))::integer) as "caller__columns", "requested".*
  from "users"
  left join "sessions" on "sessions"."id" = $1 and "sessions"."user_id" = "users"."id"
  left join lateral (select true as "enrolled"
  from "mfa_factors"
  where "mfa_factors"."user_id" = "users"."id" and "mfa_factors"."confirmed_at" is not null
  limit 1) as "confirmed_factor" on true
  left join lateral (select true as "caller__row", "requested_rows".*
  from (select *
  from "variants"
  where "id" = $2) as "requested_rows") as "requested" on true
  where "users"."id" = $3;
select * from "variants" where "id" = $1;

-- src/variants/variant-repository.ts: variantBySku(beside a user's caller, then alone: 'sku-1')
select json_build_object('caller__kind', 'user', 'caller__id', "users"."id", 'caller__role', "users"."role", 'caller__status', case when users.deleted_at is null then users.status else 'deleted' end, 'caller__live', (sessions.id is not null and sessions.ended_at is null and sessions.expires_at > now() and sessions.client_id is null), 'caller__stale', (sessions.last_used_at is null or sessions.last_used_at < now() - interval '1 minute'), 'caller__scopes', null::text[], 'caller__rate_limit', null::integer, 'caller__credential', null::uuid, 'caller__mfa_enrolled', coalesce(confirmed_factor.enrolled, false), 'caller__mfa_age', floor(extract(epoch from now() - sessions.mfa_verified_at))::integer) as "caller__columns", "requested".*
  from "users"
  left join "sessions" on "sessions"."id" = $1 and "sessions"."user_id" = "users"."id"
  left join lateral (select true as "enrolled"
  from "mfa_factors"
  where "mfa_factors"."user_id" = "users"."id" and "mfa_factors"."confirmed_at" is not null
  limit 1) as "confirmed_factor" on true
  left join lateral (select true as "caller__row", "requested_rows".*
  from (select *
  from "variants"
  where lower(sku) = $2) as "requested_rows") as "requested" on true
  where "users"."id" = $3;
select * from "variants" where lower(sku) = $1;

-- src/variants/variant-repository.ts: findVariantById('00000000-0000-4000-8000-000000000003')
select * from "variants" where "id" = $1;

-- src/variants/variant-repository.ts: findVariantByIdForUpdate('00000000-0000-4000-8000-000000000003')
select * from "variants" where "id" = $1 for update;

-- src/variants/variant-repository.ts: insertVariant('00000000-0000-4000-8000-000000000099', { product_id: 'P-1', sku: 'SKU-2', name: 'Blue shirt', price: 1999, attributes: { color: 'blue' } })
insert into "variants" ("id", "product_id", "sku", "name", "price", "attributes", "created_at", "updated_at") values ($1, $2, $3, $4, $5, $6, $7, $8)
  returning *;

-- src/variants/variant-repository.ts: replaceVariantFields('00000000-0000-4000-8000-000000000003', { product_id: 'P-1', sku: 'SKU-1', name: 'Blue shirt', price: 1999, attributes: { color: 'blue' } })
update "variants" set "product_id" = $1, "sku" = $2, "name" = $3, "price" = $4, "attributes" = $5, "version" = version + 1, "updated_at" = $6
  where "id" = $7
  returning *;

-- src/variants/variant-repository.ts: lockVariantsBySku(['sku-1'])
select * from "variants" where lower(sku) = any($1::text[]) order by "id" for update;

-- src/variants/variant-repository.ts: existingVariantIds(['00000000-0000-4000-8000-000000000003'])
select "id" from "variants" where id = any($1::uuid[]);

-- src/variants/variant-repository.ts: variantsWithAttributes([{ productId: 'P-1', attributes: { color: 'red' } }])
select holder.id, asked.position
  from unnest($1::text[], $2::jsonb[]) with ordinality as asked (product_id, attributes, position)
  cross join lateral (
    select variants.id from variants
   
      where variants.product_id = asked.product_id and md5(variants.attributes::text) = md5(asked.attributes::text)
    limit 1
  ) as holder;

-- src/variants/variant-repository.ts: deleteVariant('00000000-0000-4000-8000-000000000099')
delete from "variants" where "id" = $1;

-- src/variants/variant-repository.ts: variantsOfProductPage('P-1', { limit: 20 })
select * from "variants" where "product_id" = $1 order by "created_at" asc, "id" asc limit $2;

-- src/variants/variant-repository.ts: countVariantsOfProduct('P-1')
select count(*) as "total" from "variants" where "product_id" = $1;

-- src/variants/variant-repository.ts: variantsPage({ q: 'shirt', product_id: 'P-1', in_stock: true }, { limit: 20 })
select *
  from "variants"
  where "product_id" = $1 and stock - reserved - available_at_inactive_locations > $2 and ("sku" ilike $3 or "name" ilike $4)
  order by "created_at" desc, "id" desc
  limit $5;

-- src/variants/variant-repository.ts: variantsOldestFirstPage({ q: 'shirt', product_id: 'P-1', in_stock: true }, { limit: 20 })
select *
  from "variants"
  where "product_id" = $1 and stock - reserved - available_at_inactive_locations > $2 and ("sku" ilike $3 or "name" ilike $4)
  order by "created_at" asc, "id" asc
  limit $5;

-- src/variants/variant-repository.ts: attributeKeysOf({ q: 'shirt', product_id: 'P-1', in_stock: true })
select distinct jsonb_object_keys(attributes) as "key"
  from "variants"
  where "product_id" = $1 and stock - reserved - available_at_inactive_locations > $2 and ("sku" ilike $3 or "name" ilike $4);

-- src/variants/variant-repository.ts: countVariants({ q: 'shirt', product_id: 'P-1', in_stock: true })
select count(*) as "total"
  from "variants"
  where "product_id" = $1 and stock - reserved - available_at_inactive_locations > $2 and ("sku" ilike $3 or "name" ilike $4);
