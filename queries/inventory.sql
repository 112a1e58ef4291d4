-- Written by `npm run queries` from scripts/query-registry/; do not edit. Each function: the statements its sample sends, in order; parameters as $1.., their values left out.

-- src/inventory/location-repository.ts: locationsByPriority(beside a user's caller, then alone: )
select json_build_object('caller__kind', 'user', 'caller__id', "users"."id", 'caller__role', "users"."role", 'caller__status', case when users.deleted_at is null then users.status else 'deleted' end, 'caller__live', (sessions.id is not null and sessions.ended_at is null and sessions.expires_at > now() and sessions.client_id is null), 'caller__stale', (sessions.last_used_at is null or sessions.last_used_at < now() - interval '1 minute'), 'caller__scopes', null::text[], 'caller__rate_limit', null::integer, 'caller__credential', null::uuid, 'caller__mfa_enrolled', coalesce(confirmed_factor.enrolled, false), 'caller__mfa_age', floor(extract(epoch from now() - sessions.mfa_verified_at))::integer) as "caller__columns", "requested".*
  from "users"
  left join "sessions" on "sessions"."id" = $1 and "sessions"."user_id" = "users"."id"
  left join lateral (select true as "enrolled"
  from "mfa_factors"
  where "mfa_factors"."user_id" = "users"."id" and "mfa_factors"."confirmed_at" is not null
  limit 1) as "confirmed_factor" on true
  left join lateral (select true as "caller__row", "requested_rows".*
  from (select *
  from "locations"
  order by "priority", lower(code)) as "requested_rows") as "requested" on true
  where "users"."id" = $2;
select * from "locations" order by "priority", lower(code);

-- src/inventory/location-repository.ts: locationById(beside a user's caller, then alone: '00000000-0000-4000-8000-000000000016')
select json_build_object('caller__kind', 'user', 'caller__id', "users"."id", 'caller__role', "users"."role", 'caller__status', case when users.deleted_at is null then users.status else 'deleted' end, 'caller__live', (sessions.id is not null and sessions.ended_at is null and sessions.expires_at > now() and sessions.client_id is null), 'caller__stale', (sessions.last_used_at is null or sessions.last_used_at < now() - interval '1 minute'), 'caller__scopes', null::text[], 'caller__rate_limit', null::integer, 'caller__credential', null::uuid, 'caller__mfa_enrolled', coalesce(confirmed_factor.enrolled, false), 'caller__mfa_age', floor(extract(epoch from now() - sessions.mfa_verified_at))::integer) as "caller__columns", "requested".*
  from "users"
  left join "sessions" on "sessions"."id" = $1 and "sessions"."user_id" = "users"."id"
  left join lateral (select true as "enrolled"
  from "mfa_factors"
  where "mfa_factors"."user_id" = "users"."id" and "mfa_factors"."confirmed_at" is not null
  limit 1) as "confirmed_factor" on true
  left join lateral (select true as "caller__row", "requested_rows".*
  from (select *
  from "locations"
  where "id" = $2) as "requested_rows") as "requested" on true
  where "users"."id" = $3;
select * from "locations" where "id" = $1;

-- src/inventory/location-repository.ts: lockLocation('00000000-0000-4000-8000-000000000016')
select * from "locations" where "id" = $1 for update;

-- src/inventory/location-repository.ts: takeDefaultLocationTurn()
select pg_advisory_xact_lock($1);

-- src/inventory/location-repository.ts: insertLocation({ id: '00000000-0000-4000-8000-000000000099', code: 'hamburg', name: 'Hamburg', priority: 100, status: 'active', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' })
insert into "locations" ("id", "code", "name", "priority", "status", "created_at", "updated_at") values ($1, $2, $3, $4, $5, $6, $7)
  returning *;

-- src/inventory/location-repository.ts: updateLocation('00000000-0000-4000-8000-000000000016', { name: 'Berlin, hall 2', is_default: false })
update "locations" set "name" = $1, "is_default" = $2, "version" = version + 1, "updated_at" = $3
  where "id" = $4
  returning *;

-- src/inventory/location-repository.ts: clearDefaultLocation('00000000-0000-4000-8000-000000000016')
update "locations" set "is_default" = $1, "version" = version + 1, "updated_at" = $2
  where "is_default" = $3 and "id" <> $4
  returning *;

-- src/inventory/location-repository.ts: deleteLocation('00000000-0000-4000-8000-000000000016')
delete from "locations" where "id" = $1;

-- src/inventory/reservation-repository.ts: withLinesOfPage([{ id: '00000000-0000-4000-8000-000000000004', status: 'active', reference: null, expires_at: '2026-01-01T00:00:00.000Z', created_by: null, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' }])
select * from "reservation_lines" where "reservation_id" in ($1) order by "position";
select *
  from "reservation_allocations"
  where "reservation_id" in ($1)
  order by "position", "location_id";

-- src/inventory/reservation-repository.ts: activeReservationsOfVariantPage('00000000-0000-4000-8000-000000000003', { limit: 20 })
select "reservations".*
  from "reservations"
  inner join "reservation_lines" on "reservation_lines"."reservation_id" = "reservations"."id"
  where "reservation_lines"."variant_id" = $1 and "reservation_lines"."active" = $2
  order by "reservations"."created_at" desc, "reservations"."id" desc
  limit $3;

-- src/inventory/reservation-repository.ts: reservationsPage({ reference: 'order-1', status: 'active' }, { limit: 20 })
select *
  from "reservations"
  where "reference" = $1 and "status" = $2
  order by "created_at" desc, "id" desc
  limit $3;

-- src/inventory/reservation-repository.ts: reservationsCreatedByPage('00000000-0000-4000-8000-000000000001', { limit: 20 })
select * from "reservations" where "created_by" = $1 order by "created_at" asc, "id" asc limit $2;

-- src/inventory/reservation-repository.ts: countReservations({ status: 'active' })
select count(*) as "total" from "reservations" where "status" = $1;

-- src/inventory/reservation-repository.ts: countActiveReservationsOfVariant('00000000-0000-4000-8000-000000000003')
select count(*) as "total"
  from "reservations"
  inner join "reservation_lines" on "reservation_lines"."reservation_id" = "reservations"."id"
  where "reservation_lines"."variant_id" = $1 and "reservation_lines"."active" = $2;

-- src/inventory/reservation-repository.ts: reservationById(beside a user's caller, then alone: '00000000-0000-4000-8000-000000000004')
select json_build_object('caller__kind', 'user', 'caller__id', "users"."id", 'caller__role', "users"."role", 'caller__status', case when users.deleted_at is null then users.status else 'deleted' end, 'caller__live', (sessions.id is not null and sessions.ended_at is null and sessions.expires_at > now() and sessions.client_id is null), 'caller__stale', (sessions.last_used_at is null or sessions.last_used_at < now() - interval '1 minute'), 'caller__scopes', null::text[], 'caller__rate_limit', null::integer, 'caller__credential', null::uuid, 'caller__mfa_enrolled', coalesce(confirmed_factor.enrolled, false), 'caller__mfa_age', floor(extract(epoch from now() - sessions.mfa_verified_at))::integer) as "caller__columns", "requested".*
  from "users"
  left join "sessions" on "sessions"."id" = $1 and "sessions"."user_id" = "users"."id"
  left join lateral (select true as "enrolled"
  from "mfa_factors"
  where "mfa_factors"."user_id" = "users"."id" and "mfa_factors"."confirmed_at" is not null
  limit 1) as "confirmed_factor" on true
  left join lateral (select true as "caller__row", "requested_rows".*
  from (select *
  from "reservations"
  where "id" = $2) as "requested_rows") as "requested" on true
  where "users"."id" = $3;
select * from "reservations" where "id" = $1;

-- src/inventory/reservation-repository.ts: lockReservation('00000000-0000-4000-8000-000000000004')
select *, expires_at <= now() as "lapsed", reservations.xmin::text as "row_version", reservations.xmin::text <> (select in_snapshot.xmin::text
  from reservations as in_snapshot
  where in_snapshot.id = reservations.id) as "changed_under_lock", (select coalesce(json_agg(agg), '[]')
  from (select *
  from "reservation_lines"
  where "reservation_id" = "reservations"."id"
  order by "position") as agg) as "lines", (select coalesce(json_agg(agg), '[]')
  from (select *
  from "reservation_allocations"
  where "reservation_id" = "reservations"."id"
  order by "position", "location_id") as agg) as "allocations"
  from "reservations"
  where "id" = $1 for update;

-- src/inventory/reservation-repository.ts: readReservation('00000000-0000-4000-8000-000000000004')
select *, expires_at <= now() as "lapsed", reservations.xmin::text as "row_version", reservations.xmin::text <> (select in_snapshot.xmin::text
  from reservations as in_snapshot
  where in_snapshot.id = reservations.id) as "changed_under_lock", (select coalesce(json_agg(agg), '[]')
  from (select *
  from "reservation_lines"
  where "reservation_id" = "reservations"."id"
  order by "position") as agg) as "lines", (select coalesce(json_agg(agg), '[]')
  from (select *
  from "reservation_allocations"
  where "reservation_id" = "reservations"."id"
  order by "position", "location_id") as agg) as "allocations"
  from "reservations"
  where "id" = $1;

-- src/inventory/reservation-repository.ts: insertReservationIfAvailable({ lines: [{ variant_id: '00000000-0000-4000-8000-000000000003', quantity: 1 }], reference: 'order-1', expiresIn: 900, createdBy: '00000000-0000-4000-8000-000000000001' }, recordNothing)
with wanted (variant_id, quantity, position) as (values ($1::uuid, $2::integer, $3::integer)),
  unavailable as (
    select 1 from wanted left join variants on variants.id = wanted.variant_id
   
      where variants.id is null or variants.stock - variants.reserved - variants.available_at_inactive_locations < wanted.quantity),
  made as (
    insert into reservations (id, status, reference, expires_at, created_by, created_at, updated_at)
    select $4, 'active', $5, now() + make_interval(secs => $6), $7, now(), now()
    where not exists (select 1 from unavailable)
    returning *),
  made_lines as (
    insert into reservation_lines (reservation_id, position, variant_id, quantity)
    select made.id, wanted.position, wanted.variant_id, wanted.quantity from made cross join wanted
    returning *),
  recorded as (select 1 from "made")
  select made.*, (select coalesce(json_agg(made_lines
    order by made_lines.position), '[]')
    from made_lines) as lines,
    '[]'::json as allocations,
    false as held
  from made;

-- src/inventory/reservation-repository.ts: reservedMismatches(100)
select coalesce(counted.id, held.variant_id) as variant_id, coalesce(counted.reserved, 0) as counted, coalesce(held.quantity, 0)::integer as held
  from (select id, reserved from variants where reserved <> 0) as counted
  full join (select variant_id, sum(quantity) as quantity
    from reservation_lines
    where active
    group by variant_id) as held on held.variant_id = counted.id
  where coalesce(counted.reserved, 0) <> coalesce(held.quantity, 0)
  order by 1
  limit $1;

-- src/inventory/reservation-repository.ts: unitsHeldByOpenLines('00000000-0000-4000-8000-000000000003')
select coalesce(sum(quantity), 0)::integer as "held"
  from "reservation_lines"
  where "variant_id" = $1 and "active" = $2;

-- src/inventory/reservation-repository.ts: insertAllocations([{ reservation_id: '00000000-0000-4000-8000-000000000004', position: 0, location_id: '00000000-0000-4000-8000-000000000016', quantity: 2 }])
insert into "reservation_allocations" ("reservation_id", "position", "location_id", "quantity") values ($1, $2, $3, $4);

-- src/inventory/reservation-repository.ts: replaceAllocations('00000000-0000-4000-8000-000000000004', [0], [{ reservation_id: '00000000-0000-4000-8000-000000000004', position: 0, location_id: '00000000-0000-4000-8000-000000000016', quantity: 2 }])
delete from "reservation_allocations" where "reservation_id" = $1 and "position" in ($2);
insert into "reservation_allocations" ("reservation_id", "position", "location_id", "quantity") values ($1, $2, $3, $4);
update "reservations" set "updated_at" = now() where "id" = $1 returning *;

-- src/inventory/reservation-repository.ts: closeReservations(['00000000-0000-4000-8000-000000000004'], 'released')
with
  closed as (update reservations set status = $1, updated_at = now()
    where id in ($2) and true
    returning *),
  closed_lines as (update reservation_lines set active = false
    where reservation_id in (select id
    from closed)) select *
    from closed;

-- src/inventory/reservation-repository.ts: claimLapsedReservations(100)
select *
  from "reservations"
  where "status" = $1 and "expires_at" <= now()
  order by "expires_at"
  limit $2 for update skip locked;

-- src/inventory/reservation-repository.ts: overdueReservationStats()
select count(*) as "count", extract(epoch from now() - min(expires_at)) as "oldest"
  from "reservations"
  where "status" = $1 and "expires_at" <= now();

-- src/inventory/stock-level-repository.ts: defaultLocationId()
select "id" from "locations" where "is_default" = $1;

-- src/inventory/stock-level-repository.ts: shareLocations(['00000000-0000-4000-8000-000000000016'])
select * from "locations" where "id" in ($1) order by "id" for key share;

-- src/inventory/stock-level-repository.ts: locationsByIds(['00000000-0000-4000-8000-000000000016'])
select * from "locations" where "id" in ($1);

-- src/inventory/stock-level-repository.ts: levelsOfVariants(['00000000-0000-4000-8000-000000000003'])
select * from "stock_levels" where "variant_id" in ($1) order by "variant_id", "location_id";

-- src/inventory/stock-level-repository.ts: writeLevelStock('00000000-0000-4000-8000-000000000003', '00000000-0000-4000-8000-000000000016', 15)
insert into "stock_levels" ("variant_id", "location_id", "stock") values ($1, $2, $3)
  on conflict ("variant_id", "location_id") do update set "stock" = $4
  returning *;

-- src/inventory/stock-level-repository.ts: moveReserved([{ variant_id: '00000000-0000-4000-8000-000000000003', location_id: '00000000-0000-4000-8000-000000000016', delta: 2 }])
update stock_levels set reserved = stock_levels.reserved + moved.delta
  from unnest($1::uuid[], $2::uuid[], $3::integer[])
    as moved (variant_id, location_id, delta)
  where stock_levels.variant_id = moved.variant_id and stock_levels.location_id = moved.location_id;

-- src/inventory/stock-level-repository.ts: insertLevels([{ variant_id: '00000000-0000-4000-8000-000000000003', location_id: '00000000-0000-4000-8000-000000000016', stock: 5 }])
insert into stock_levels (variant_id, location_id, stock)
  select variant_id, location_id, stock
  from unnest($1::uuid[], $2::uuid[], $3::integer[])
    as opened (variant_id, location_id, stock);

-- src/inventory/stock-level-repository.ts: levelsAtEveryLocation('00000000-0000-4000-8000-000000000003')
select "locations"."id" as "location_id", "locations"."code", "locations"."status", coalesce(stock_levels.stock, 0) as "stock", coalesce(stock_levels.reserved, 0) as "reserved"
  from "locations"
  left join "stock_levels" on "stock_levels"."location_id" = "locations"."id" and "stock_levels"."variant_id" = $1
  order by "locations"."priority", lower(locations.code), "locations"."code";

-- src/inventory/stock-level-repository.ts: locationHoldsStock('00000000-0000-4000-8000-000000000016')
select "variant_id"
  from "stock_levels"
  where "location_id" = $1 and ("stock" > $2 or "reserved" > $3)
  limit $4;

-- src/inventory/stock-movement-repository.ts: insertStockMovement({ variant_id: '00000000-0000-4000-8000-000000000003', location_id: '00000000-0000-4000-8000-000000000016', delta: 5, stock_after: 15, reason: 'adjustment', reference: null, actor_id: '00000000-0000-4000-8000-000000000001' })
insert into "stock_movements" ("id", "created_at", "variant_id", "location_id", "delta", "stock_after", "reason", "reference", "actor_id") values ($1, $2, $3, $4, $5, $6, $7, $8, $9);

-- src/inventory/stock-movement-repository.ts: insertStockMovements([{ variant_id: '00000000-0000-4000-8000-000000000003', location_id: '00000000-0000-4000-8000-000000000016', delta: 5, stock_after: 15, reason: 'adjustment', reference: null, actor_id: '00000000-0000-4000-8000-000000000001' }])
insert into stock_movements (id, variant_id, location_id, delta, stock_after, reason, reference, actor_id, created_at)
  select gen_random_uuid(), variant_id, location_id, delta, stock_after, reason, reference, actor_id, $1
  from unnest($2::uuid[], $3::uuid[], $4::integer[], $5::integer[], $6::text[],
              $7::text[], $8::uuid[]) as moved (variant_id, location_id, delta, stock_after, reason, reference, actor_id);

-- src/inventory/stock-movement-repository.ts: stockMovementsPage('00000000-0000-4000-8000-000000000003', { limit: 20 })
select *
  from "stock_movements"
  where "variant_id" = $1
  order by "created_at" desc, "id" desc
  limit $2;

-- src/inventory/stock-movement-repository.ts: countStockMovements('00000000-0000-4000-8000-000000000003')
select count(*) as "total" from "stock_movements" where "variant_id" = $1;

-- src/inventory/stock-repository.ts: lockVariant('00000000-0000-4000-8000-000000000003')
select * from "variants" where "id" = $1 for update;

-- src/inventory/stock-repository.ts: insertVariantsWithStock([{ id: '00000000-0000-4000-8000-000000000099', product_id: 'P-1', sku: 'SKU-NEW', name: 'Shirt', price: 1000, attributes: { color: 'blue' }, stock: 5 }])
insert into variants (id, product_id, sku, name, price, attributes, stock, created_at, updated_at)
  select id, product_id, sku, name, price, attributes, stock, $1, $2
  from unnest($3::uuid[], $4::text[], $5::text[],
              $6::text[], $7::bigint[], $8::jsonb[],
              $9::integer[])
    as created (id, product_id, sku, name, price, attributes, stock);

-- src/inventory/stock-repository.ts: lockVariantsInIdOrder(['00000000-0000-4000-8000-000000000003'])
select * from "variants" where "id" in ($1) order by "id" for update;

-- src/inventory/stock-repository.ts: variantKey(beside a user's caller, then alone: '00000000-0000-4000-8000-000000000003')
select json_build_object('caller__kind', 'user', 'caller__id', "users"."id", 'caller__role', "users"."role", 'caller__status', case when users.deleted_at is null then users.status else 'deleted' end, 'caller__live', (sessions.id is not null and sessions.ended_at is null and sessions.expires_at > now() and sessions.client_id is null), 'caller__stale', (sessions.last_used_at is null or sessions.last_used_at < now() - interval '1 minute'), 'caller__scopes', null::text[], 'caller__rate_limit', null::integer, 'caller__credential', null::uuid, 'caller__mfa_enrolled', coalesce(confirmed_factor.enrolled, false), 'caller__mfa_age', floor(extract(epoch from now() - sessions.mfa_verified_at))::integer) as "caller__columns", "requested".*
  from "users"
  left join "sessions" on "sessions"."id" = $1 and "sessions"."user_id" = "users"."id"
  left join lateral (select true as "enrolled"
  from "mfa_factors"
  where "mfa_factors"."user_id" = "users"."id" and "mfa_factors"."confirmed_at" is not null
  limit 1) as "confirmed_factor" on true
  left join lateral (select true as "caller__row", "requested_rows".*
  from (select "id"
  from "variants"
  where "id" = $2) as "requested_rows") as "requested" on true
  where "users"."id" = $3;
select "id" from "variants" where "id" = $1;

-- src/inventory/stock-repository.ts: writeStock('00000000-0000-4000-8000-000000000003', { stock: 15, moveVersion: true })
update "variants" set "stock" = $1, "version" = version + 1, "updated_at" = $2
  where "id" = $3
  returning *;

-- src/inventory/stock-repository.ts: holdUnits('00000000-0000-4000-8000-000000000003', 1, { split: true })
with hold_lock as (select id from variants where id = $1 and true for update),
  hold_level as (
    update stock_levels set reserved = reserved + $2
    where variant_id = $3 and stock - reserved >= $4 and exists (select 1 from hold_lock)
      and location_is_active(location_id)
      and location_id = (
        select stock_levels.location_id
          from stock_levels join locations on locations.id = stock_levels.location_id
       
          where stock_levels.variant_id = $5 and locations.status = 'active' and stock_levels.stock - stock_levels.reserved >= $6
        order by locations.priority, lower(locations.code), locations.code limit 1)
    returning location_id),
  held as (
    update variants set reserved = reserved + $7, version = version + 1, updated_at = $8
    from hold_level
    where variants.id = $9
    returning variants.id, hold_level.location_id) select location_id from held;
with hold_lock as (select id from variants where id = $1 and true for update),
  hold_level as (
    update stock_levels set reserved = reserved + $2
    where variant_id = $3 and stock - reserved >= $4 and exists (select 1 from hold_lock)
      and location_is_active(location_id)
      and location_id = (
        select stock_levels.location_id
          from stock_levels join locations on locations.id = stock_levels.location_id
       
          where stock_levels.variant_id = $5 and locations.status = 'active' and stock_levels.stock - stock_levels.reserved >= $6
        order by locations.priority, lower(locations.code), locations.code limit 1)
    returning location_id),
  held as (
    update variants set reserved = reserved + $7, version = version + 1, updated_at = $8
    from hold_level
    where variants.id = $9
    returning variants.id, hold_level.location_id) select location_id from held;
with ordered as (
    select stock_levels.location_id, stock_levels.stock - stock_levels.reserved as free,
      sum(stock_levels.stock - stock_levels.reserved) over (order by locations.priority, lower(locations.code), locations.code) as running
    from stock_levels join locations on locations.id = stock_levels.location_id
   
      where stock_levels.variant_id = $1 and locations.status = 'active' and stock_levels.stock > stock_levels.reserved),
  taking as (
    select location_id, least(free, $2 - (running - free))::integer as quantity from ordered
    where running - free < $3 and (select max(running) from ordered) >= $4),
  held_levels as (
    update stock_levels set reserved = stock_levels.reserved + taking.quantity from taking
    where stock_levels.variant_id = $5 and stock_levels.location_id = taking.location_id
    returning stock_levels.location_id, taking.quantity),
  held as (
    update variants set reserved = reserved + $6, version = version + 1, updated_at = $7
    where id = $8 and exists (select 1 from taking) returning id)
  select location_id, quantity from held_levels order by location_id;

-- src/inventory/stock-repository.ts: releaseUnits('00000000-0000-4000-8000-000000000003', '00000000-0000-4000-8000-000000000016', 1)
with released as (
    update variants set reserved = reserved - $1, version = version + 1, updated_at = $2
    where id = $3 returning id)
  update stock_levels set reserved = reserved - $4
  where variant_id = $5 and location_id = $6 and exists (select 1 from released);

-- src/inventory/stock-repository.ts: takeHeldUnits('00000000-0000-4000-8000-000000000003', '00000000-0000-4000-8000-000000000016', 2, { reason: 'reservation_committed', reference: 'order-1', actor_id: '00000000-0000-4000-8000-000000000001' }, recordNothing)
with
  taken as (
    update variants set stock = stock - $1, reserved = reserved - $2, version = version + 1, updated_at = $3
    where id = $4
    returning *),
  taken_level as (
    update stock_levels set stock = stock - $5, reserved = reserved - $6
    where variant_id = $7 and location_id = $8 and exists (select 1 from taken)
    returning location_id, stock as level_stock),
  taken_at as (select taken.*, taken_level.location_id, taken_level.level_stock
    from taken cross join taken_level),
  moved as (
    insert into stock_movements (id, variant_id, location_id, delta, stock_after, reason, reference, actor_id, created_at)
    select $9, id, location_id, $10, level_stock, $11, $12, $13, $14 from taken_at),
  recorded as (select 1 from "taken_at")
  select * from "taken" where exists (select 1 from taken);

-- src/inventory/stock-repository.ts: variantsByIds(['00000000-0000-4000-8000-000000000003'])
select * from "variants" where id = any($1::uuid[]);

-- src/inventory/stock-repository.ts: takeReconciliationTurn()
select pg_try_advisory_xact_lock($1) as taken;

-- src/inventory/stock-repository.ts: writeReserved('00000000-0000-4000-8000-000000000003', 2)
update "variants" set "reserved" = $1, "version" = version + 1, "updated_at" = $2 where "id" = $3;
with held as (
    select allocations.location_id, sum(allocations.quantity)::integer as quantity
    from reservation_lines as lines
    join reservation_allocations as allocations on allocations.reservation_id = lines.reservation_id and allocations.position = lines.position
    where lines.variant_id = $1 and lines.active
    group by allocations.location_id),
  wanted as (
    select levels.location_id, coalesce(held.quantity, 0) as reserved
    from stock_levels as levels left join held on held.location_id = levels.location_id
    where levels.variant_id = $2)
  update stock_levels set reserved = wanted.reserved from wanted
  where stock_levels.variant_id = $3 and stock_levels.location_id = wanted.location_id
    and stock_levels.reserved <> wanted.reserved and wanted.reserved <= stock_levels.stock;

-- src/inventory/stock-repository.ts: moveVersions(['00000000-0000-4000-8000-000000000003'])
update "variants" set "version" = version + 1, "updated_at" = $1 where "id" in ($2);

-- src/inventory/stock-repository.ts: recountAvailableAtInactiveLocations('00000000-0000-4000-8000-000000000016')
select "id"
  from "variants"
  where "id" in (select "variant_id"
  from "stock_levels"
  where "location_id" = $1)
  order by "id" for update;

-- src/inventory/reconciliation-repository.ts: levelMismatches(100)
with held as (
    select lines.variant_id, allocations.location_id, sum(allocations.quantity)::integer as quantity
    from reservation_lines as lines
    join reservation_allocations as allocations on allocations.reservation_id = lines.reservation_id and allocations.position = lines.position
    where lines.active
    group by lines.variant_id, allocations.location_id),
  moved as (
    select variant_id, location_id, sum(delta)::integer as stock
      from stock_movements
      group by variant_id, location_id),
  inactive as (
    select stock_levels.variant_id, sum(stock_levels.stock - stock_levels.reserved)::integer as available
    from stock_levels join locations on locations.id = stock_levels.location_id
    where locations.status = 'inactive'
    group by stock_levels.variant_id)
  select * from (
    select 'reserved' as figure, coalesce(levels.variant_id, held.variant_id) as variant_id, coalesce(levels.location_id, held.location_id) as location_id,
      coalesce(levels.reserved, 0) as counted, coalesce(held.quantity, 0) as expected
    from (select variant_id, location_id, reserved from stock_levels where reserved <> 0) as levels
    full join held on held.variant_id = levels.variant_id and held.location_id = levels.location_id
    where coalesce(levels.reserved, 0) <> coalesce(held.quantity, 0)
    union all
    select 'stock', coalesce(levels.variant_id, moved.variant_id), coalesce(levels.location_id, moved.location_id),
      coalesce(levels.stock, 0), coalesce(moved.stock, 0)
    from stock_levels as levels
    full join moved on moved.variant_id = levels.variant_id and moved.location_id = levels.location_id
    where coalesce(levels.stock, 0) <> coalesce(moved.stock, 0)
    union all
    select 'available_at_inactive_locations', variants.id, null, variants.available_at_inactive_locations, coalesce(inactive.available, 0)
    from variants left join inactive on inactive.variant_id = variants.id
    where variants.available_at_inactive_locations <> coalesce(inactive.available, 0)
  ) as found
  order by variant_id, figure, location_id
  limit $1;
