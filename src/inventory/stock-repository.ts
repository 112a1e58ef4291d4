import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { Database, VariantRow } from '../db/tables.js';
import { preparedQuery } from '../db/prepared-query.js';
import { callerRead } from '../sessions/caller-query.js';
import type { NewMovement } from './stock-movement-repository.js';

/** The advisory lock key of the reconciliation of `reserved` (any fixed number no other lock uses). */
const RECONCILIATION_LOCK = 720_431_121;

/**
 * The stock columns of the variants table (`stock`, `reserved`), which inventory alone writes
 * (a commit's update writes its stock movement in the same statement); the rest of the row is
 * the variants area's. One insert of whole rows is here: an import batch's new variants with
 * their opening stock (insertVariantsWithStock), their other fields as variants decided them.
 */

/** A variant's row, locked for a change of its stock. */
export function lockVariant(trx: Transaction<Database>, id: string): Promise<VariantRow | undefined> {
  return trx.selectFrom('variants').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/** The rows of several variants, locked in id order (so two requests over them queue, never deadlock). */
export function lockVariantsInIdOrder(trx: Transaction<Database>, ids: string[]): Promise<VariantRow[]> {
  return trx.selectFrom('variants').selectAll().where('id', 'in', ids).orderBy('id').forUpdate().execute();
}

/** Moves on the versions of locked variants whose figures per location changed though their totals did not (a reallocation). */
export async function moveVersions(trx: Transaction<Database>, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await trx.updateTable('variants').set({ version: sql`version + 1`, updated_at: new Date() }).where('id', 'in', ids).execute();
}

/** Whether a variant exists, read beside the caller (the 404 of a variant's sub-resources). */
export const variantKey = callerRead<{ id: string }, [string]>('inventory.variantKey', (db, id) => db.selectFrom('variants').select('id').where('id', '=', id));

/** Writes a locked variant's stock; the version moves on unless the change that includes this one moved it already. */
export function writeStock(trx: Transaction<Database>, id: string, change: { stock: number; moveVersion: boolean }): Promise<VariantRow> {
  return trx
    .updateTable('variants')
    .set({
      stock: change.stock,
      ...(change.moveVersion ? { version: sql`version + 1`, updated_at: new Date() } : {}),
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * The steps of a statement's `with` that hold `quantity` units of a variant at the first active
 * location (by priority, then code) that has them all available, or only at `locationId` if
 * given (and active), if `condition` holds. The
 * variant's row is locked first (`hold_lock`), as by every writer of its levels, so a hold and a
 * stock change or transfer never lock in opposite orders; then the level takes the units under
 * its check (stock - reserved >= quantity, checked again on the row as it is when locked), and
 * the variant's kept `reserved` with it. The step `held` returns the variant's id and the
 * location holding the units, or nothing when none could (nothing is written then).
 * The location is chosen in the statement's snapshot: when another request took its units
 * meanwhile, the hold fails though another location may have them, and the caller, holding the
 * variant's lock from this statement, may ask again (holdUnits). Whether the location is active
 * is checked afresh on the level's row (0043's location_is_active), after the variant's lock is
 * taken (an uncorrelated `exists` is a filter PostgreSQL runs before the scan): a location made
 * inactive while this statement waited for that lock is seen inactive.
 */
function holdingSteps(variantId: string, quantity: number, condition: RawBuilder<boolean>, now: Date, locationId?: string): RawBuilder<unknown> {
  return sql`hold_lock as (select id from variants where id = ${variantId} and ${condition} for update),
    hold_level as (
      update stock_levels set reserved = reserved + ${quantity}
      where variant_id = ${variantId} and stock - reserved >= ${quantity} and exists (select 1 from hold_lock)
        and location_is_active(location_id)
        and ${
          locationId
            ? sql`location_id = ${locationId}`
            : sql`location_id = (
          select stock_levels.location_id from stock_levels join locations on locations.id = stock_levels.location_id
          where stock_levels.variant_id = ${variantId} and locations.status = 'active' and stock_levels.stock - stock_levels.reserved >= ${quantity}
          order by locations.priority, lower(locations.code), locations.code limit 1)`
        }
      returning location_id),
    held as (
      update variants set reserved = reserved + ${quantity}, version = version + 1, updated_at = ${now}
      from hold_level
      where variants.id = ${variantId}
      returning variants.id, hold_level.location_id)`;
}

/** Units of a reservation line held at one location. */
export interface HeldUnits {
  location_id: string;
  quantity: number;
}

/**
 * Holds `quantity` more units of a variant (holdingSteps): the whole line at one location (the
 * named one, or the first active one that has them all), else, with `split`, greedily over the
 * active locations by priority then code (splitUnits). Undefined when the variant is missing or
 * the units are not there (nothing is written then). A failed first try took the variant's
 * lock, so what follows reads every level as it stands and answers exactly.
 */
export async function holdUnits(trx: Transaction<Database>, variantId: string, quantity: number, options: { locationId?: string | undefined; split: boolean }): Promise<HeldUnits[] | undefined> {
  for (let attempt = 1; attempt <= 2; attempt++) {
    const { rows } = await sql<{ location_id: string }>`with ${holdingSteps(variantId, quantity, sql`true`, new Date(), options.locationId)} select location_id from held`.execute(trx);
    if (rows[0]) return [{ location_id: rows[0].location_id, quantity }];
  }
  if (options.locationId || !options.split) return undefined;
  return splitUnits(trx, variantId, quantity);
}

/**
 * Holds `quantity` units of a variant over several active locations, by priority then code, each
 * giving what it has available until the line is full; nothing when all of them together have
 * too few. The caller holds the variant's lock (holdUnits), so the levels read are the ones
 * written.
 */
async function splitUnits(trx: Transaction<Database>, variantId: string, quantity: number): Promise<HeldUnits[] | undefined> {
  const { rows } = await sql<HeldUnits>`
    with ordered as (
      select stock_levels.location_id, stock_levels.stock - stock_levels.reserved as free,
        sum(stock_levels.stock - stock_levels.reserved) over (order by locations.priority, lower(locations.code), locations.code) as running
      from stock_levels join locations on locations.id = stock_levels.location_id
      where stock_levels.variant_id = ${variantId} and locations.status = 'active' and stock_levels.stock > stock_levels.reserved),
    taking as (
      select location_id, least(free, ${quantity} - (running - free))::integer as quantity from ordered
      where running - free < ${quantity} and (select max(running) from ordered) >= ${quantity}),
    held_levels as (
      update stock_levels set reserved = stock_levels.reserved + taking.quantity from taking
      where stock_levels.variant_id = ${variantId} and stock_levels.location_id = taking.location_id
      returning stock_levels.location_id, taking.quantity),
    held as (
      update variants set reserved = reserved + ${quantity}, version = version + 1, updated_at = ${new Date()}
      where id = ${variantId} and exists (select 1 from taking) returning id)
    select location_id, quantity from held_levels order by location_id`.execute(trx);
  return rows.length > 0 ? rows : undefined;
}

/** A new variant's row as inserted with its opening stock: the variants area's fields, inventory's stock. */
export type StockedVariant = Pick<VariantRow, 'id' | 'product_id' | 'sku' | 'name' | 'price' | 'attributes' | 'stock'>;

/**
 * New variants with their opening stock (an import's batch): one statement for a whole batch, its
 * values as one array a column (a multi-row VALUES of thousands of parameters costs PostgreSQL
 * more to parse than the rows cost to write). The stock is written with the row rather than by
 * an update after it, as openStock does for one: rewriting every row of a batch took a quarter of
 * an import's time.
 */
export async function insertVariantsWithStock(trx: Transaction<Database>, variants: StockedVariant[]): Promise<void> {
  if (variants.length === 0) return;
  const now = new Date();
  await sql`
    insert into variants (id, product_id, sku, name, price, attributes, stock, created_at, updated_at)
    select id, product_id, sku, name, price, attributes, stock, ${now}, ${now}
    from unnest(${variants.map((variant) => variant.id)}::uuid[], ${variants.map((variant) => variant.product_id)}::text[], ${variants.map((variant) => variant.sku)}::text[],
                ${variants.map((variant) => variant.name)}::text[], ${variants.map((variant) => variant.price)}::bigint[], ${variants.map((variant) => JSON.stringify(variant.attributes))}::jsonb[],
                ${variants.map((variant) => variant.stock)}::integer[])
      as created (id, product_id, sku, name, price, attributes, stock)`.execute(trx);
}

/** A step of a statement's `with` and the name of the step whose rows it returns. */
export interface StatementStep {
  step: string;
  steps: RawBuilder<unknown>;
}

/**
 * The steps of a statement's `with` that hold `quantity` units of a variant, if that many are
 * available at one active location and `condition` holds (holdingSteps), for a reservation of
 * one line, in its insert's statement (one round trip less; the row is locked from there to the
 * commit, as by a hold of its own). Its step `held`: the variant's id and the location if it
 * held them, else no row.
 */
export function holdingStep(variantId: string, quantity: number, condition: RawBuilder<boolean>, locationId?: string): StatementStep {
  return { step: 'held', steps: holdingSteps(variantId, quantity, condition, new Date(), locationId) };
}

/** Gives units held at a location back (a reservation released or expired), the variant's row first; the version moves on. */
export async function releaseUnits(trx: Transaction<Database>, variantId: string, locationId: string, quantity: number): Promise<void> {
  await sql`
    with released as (
      update variants set reserved = reserved - ${quantity}, version = version + 1, updated_at = ${new Date()}
      where id = ${variantId} returning id)
    update stock_levels set reserved = reserved - ${quantity}
    where variant_id = ${variantId} and location_id = ${locationId} and exists (select 1 from released)`.execute(trx);
}

/**
 * Takes units held at a location off the stock and off `reserved` in one update of the variant's
 * row, then of the level (a commit), and writes in the same statement its movement and what
 * `recordedWith` adds (the steps that record the commit's events, given the name of the step that
 * returns the updated row with `location_id` and `level_stock`, the stock left there), so the
 * variant's lock is
 * held for this statement and the commit only. `alongside` adds the steps of another table's
 * change to the statement (a commit closes its reservations there: one round trip less), which
 * then answers with the rows of its step `answer`; else with the variant's row after it. With
 * `alongside.required`, the units are taken only if `answer` has rows, and no rows is an answer
 * (a commit in one statement, which finds its reservation no longer open); without it, the
 * caller holds the locks that make the update certain, and no rows is a failure.
 */
export async function takeHeldUnits<Answer = VariantRow>(
  db: Kysely<Database>,
  variantId: string,
  locationId: string,
  quantity: number,
  movement: Pick<NewMovement, 'reason' | 'reference' | 'actor_id'>,
  recordedWith: (updatedStep: string) => RawBuilder<unknown>,
  alongside?: { steps: RawBuilder<unknown>; answer: string; required?: boolean },
): Promise<Answer[]> {
  const now = new Date();
  const { rows } = await sql<Answer>`
    with ${alongside ? sql`${alongside.steps},` : sql``}
    taken as (
      update variants set stock = stock - ${quantity}, reserved = reserved - ${quantity}, version = version + 1, updated_at = ${now}
      where id = ${variantId}${alongside?.required ? sql` and exists (select 1 from ${sql.table(alongside.answer)})` : sql``}
      returning *),
    taken_level as (
      update stock_levels set stock = stock - ${quantity}, reserved = reserved - ${quantity}
      where variant_id = ${variantId} and location_id = ${locationId} and exists (select 1 from taken)
      returning location_id, stock as level_stock),
    taken_at as (select taken.*, taken_level.location_id, taken_level.level_stock from taken cross join taken_level),
    moved as (
      insert into stock_movements (id, variant_id, location_id, delta, stock_after, reason, reference, actor_id, created_at)
      select ${randomUUID()}, id, location_id, ${-quantity}, level_stock, ${movement.reason}, ${movement.reference}, ${movement.actor_id}, ${now} from taken_at),
    ${recordedWith('taken_at')}
    select * from ${sql.table(alongside?.answer ?? 'taken')} where exists (select 1 from taken)`.execute(db);
  // The units were held under the reservation's lock, so the variant is there; so is what `alongside` writes.
  if (rows.length === 0 && !alongside?.required) throw new Error(`committing held units of variant ${variantId}: nothing taken${alongside ? ` or nothing in ${alongside.answer}` : ''}`);
  return rows;
}

/** Variants, unlocked, in the order of `ids` (undefined for a missing one): why a hold failed. */
export async function variantsByIds(trx: Transaction<Database>, ids: string[]): Promise<(VariantRow | undefined)[]> {
  const rows = await variantsStatement(trx, ids);
  return ids.map((id) => rows.find((row) => row.id === id));
}

// Built once (prepared-query.ts), one text for any number of ids.
const variantsStatement = preparedQuery((db, ids: string[]) => db.selectFrom('variants').selectAll().where(sql<boolean>`id = any(${ids}::uuid[])`));

/**
 * After a location's status changed (its row locked by the change): locks the variants holding a
 * level there, in id order as every writer locks them, then recounts their
 * `available_at_inactive_locations` in a statement of its own, so it reads every level as the
 * writers that held those locks left it (a writer after this one keeps it by 0036's trigger).
 * A variant whose `available` changed moves its version on, so a cached copy (its ETag) is refreshed.
 */
export async function recountAvailableAtInactiveLocations(trx: Transaction<Database>, locationId: string): Promise<void> {
  const held = await trx
    .selectFrom('variants')
    .select('id')
    .where('id', 'in', (eb) => eb.selectFrom('stock_levels').select('variant_id').where('location_id', '=', locationId))
    .orderBy('id')
    .forUpdate()
    .execute();
  if (held.length === 0) return;
  await sql`
    with counted as (
      select held.id, coalesce((
        select sum(stock_levels.stock - stock_levels.reserved)::integer
        from stock_levels join locations on locations.id = stock_levels.location_id
        where stock_levels.variant_id = held.id and locations.status = 'inactive'), 0) as available
      from unnest(${held.map((row) => row.id)}::uuid[]) as held (id))
    update variants set available_at_inactive_locations = counted.available, version = version + 1, updated_at = ${new Date()}
    from counted
    where variants.id = counted.id and variants.available_at_inactive_locations <> counted.available`.execute(trx);
}

/** The reconciliation's turn: one instance a pass (a transaction-scoped advisory lock, not waited for). */
export async function takeReconciliationTurn(trx: Transaction<Database>): Promise<boolean> {
  const { rows } = await sql<{ taken: boolean }>`select pg_try_advisory_xact_lock(${RECONCILIATION_LOCK}) as taken`.execute(trx);
  return rows[0]!.taken;
}

/**
 * Sets a locked variant's `reserved` (the reconciliation's repair), and each of its levels'
 * `reserved` to what the open allocations there hold (where that fits the level's stock), so
 * the variant's `reserved` stays the sum of its levels'; the version moves on.
 */
export async function writeReserved(trx: Transaction<Database>, variantId: string, reserved: number): Promise<void> {
  await trx.updateTable('variants').set({ reserved, version: sql`version + 1`, updated_at: new Date() }).where('id', '=', variantId).execute();
  await sql`
    with held as (
      select allocations.location_id, sum(allocations.quantity)::integer as quantity
      from reservation_lines as lines
      join reservation_allocations as allocations on allocations.reservation_id = lines.reservation_id and allocations.position = lines.position
      where lines.variant_id = ${variantId} and lines.active
      group by allocations.location_id),
    wanted as (
      select levels.location_id, coalesce(held.quantity, 0) as reserved
      from stock_levels as levels left join held on held.location_id = levels.location_id
      where levels.variant_id = ${variantId})
    update stock_levels set reserved = wanted.reserved from wanted
    where stock_levels.variant_id = ${variantId} and stock_levels.location_id = wanted.location_id
      and stock_levels.reserved <> wanted.reserved and wanted.reserved <= stock_levels.stock`.execute(trx);
}
