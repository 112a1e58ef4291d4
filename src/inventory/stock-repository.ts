import { sql, type Transaction } from 'kysely';
import type { Database, VariantRow } from '../db/tables.js';
import { callerRead } from '../sessions/caller-query.js';

/**
 * The stock columns of the variants table (`stock`, `reserved`), which inventory alone writes;
 * the rest of the row is the variants area's.
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

/**
 * Writes a locked variant's stock (and, committing a reservation, its reserved units); the
 * version moves on unless the change that includes this one moved it already.
 */
export function writeStock(trx: Transaction<Database>, id: string, change: { stock: number; reserved?: number; moveVersion: boolean }): Promise<VariantRow> {
  return trx
    .updateTable('variants')
    .set({
      stock: change.stock,
      ...(change.reserved === undefined ? {} : { reserved: change.reserved }),
      ...(change.moveVersion ? { version: sql`version + 1`, updated_at: new Date() } : {}),
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Adds to (or, negative, takes from) a locked variant's `reserved`; the version moves on. */
export async function moveReserved(trx: Transaction<Database>, variantId: string, by: number): Promise<void> {
  await trx
    .updateTable('variants')
    .set({ reserved: sql`reserved + ${by}`, version: sql`version + 1`, updated_at: new Date() })
    .where('id', '=', variantId)
    .execute();
}

/** The first stock of many variants just created (their version stays: it is their creation's). */
export async function writeOpeningStocks(trx: Transaction<Database>, opening: { variantId: string; stock: number }[]): Promise<void> {
  await sql`
    update variants set stock = opened.stock
    from unnest(${opening.map((item) => item.variantId)}::uuid[], ${opening.map((item) => item.stock)}::integer[]) as opened (id, stock)
    where variants.id = opened.id`.execute(trx);
}
