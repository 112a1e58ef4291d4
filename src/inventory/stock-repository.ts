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
 * Holds `quantity` more units of a variant if that many are available: one conditional update,
 * which takes the row's lock, so a reservation holds the hot row only from here to its commit.
 * False when the variant is missing or has too few units (nothing is written then).
 */
export async function holdUnits(trx: Transaction<Database>, variantId: string, quantity: number): Promise<boolean> {
  const held = await holdStatement(trx, quantity, new Date(), variantId, quantity);
  return held.length === 1;
}

// Built once (prepared-query.ts): the flash sale's hot path. The quantity is bound twice, a value each.
const holdStatement = preparedQuery((db, quantity: number, now: Date, variantId: string, needed: number) =>
  db
    .updateTable('variants')
    .set({ reserved: sql`reserved + ${quantity}`, version: sql`version + 1`, updated_at: now })
    .where('id', '=', variantId)
    .where(sql<boolean>`stock - reserved >= ${needed}`)
    .returning('id'),
);

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
 * The step of a statement's `with` that holds `quantity` units of a variant, if that many are
 * available and `condition` holds: holdUnits' update, for a reservation of one line, in its
 * insert's statement (one round trip less; the row is locked from there to the commit, as by a
 * hold of its own). Its rows: the variant's id if it held them, else none.
 */
export function holdingStep(variantId: string, quantity: number, condition: RawBuilder<boolean>): StatementStep {
  return {
    step: 'held',
    steps: sql`held as (
      update variants set reserved = reserved + ${quantity}, version = version + 1, updated_at = ${new Date()}
      where id = ${variantId} and stock - reserved >= ${quantity} and ${condition}
      returning id)`,
  };
}

/** Gives held units back (a reservation released or expired); the version moves on. */
export async function releaseUnits(trx: Transaction<Database>, variantId: string, quantity: number): Promise<void> {
  await trx
    .updateTable('variants')
    .set({ reserved: sql`reserved - ${quantity}`, version: sql`version + 1`, updated_at: new Date() })
    .where('id', '=', variantId)
    .execute();
}

/**
 * Takes held units off the stock and off `reserved` in one update (a commit), and writes in the
 * same statement its movement and what `recordedWith` adds (the steps that record the commit's
 * events, given the name of the step that returns the updated row), so the variant's lock is
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
    moved as (
      insert into stock_movements (id, variant_id, delta, stock_after, reason, reference, actor_id, created_at)
      select ${randomUUID()}, id, ${-quantity}, stock, ${movement.reason}, ${movement.reference}, ${movement.actor_id}, ${now} from taken),
    ${recordedWith('taken')}
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

/** The reconciliation's turn: one instance a pass (a transaction-scoped advisory lock, not waited for). */
export async function takeReconciliationTurn(trx: Transaction<Database>): Promise<boolean> {
  const { rows } = await sql<{ taken: boolean }>`select pg_try_advisory_xact_lock(${RECONCILIATION_LOCK}) as taken`.execute(trx);
  return rows[0]!.taken;
}

/** Sets a locked variant's `reserved` (the reconciliation's repair); the version moves on. */
export async function writeReserved(trx: Transaction<Database>, variantId: string, reserved: number): Promise<void> {
  await trx.updateTable('variants').set({ reserved, version: sql`version + 1`, updated_at: new Date() }).where('id', '=', variantId).execute();
}
