import type { Kysely, Transaction } from 'kysely';
import { sql } from 'kysely';
import type { Database, VariantRow } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { record, type EventContext } from '../events/event-recorder.js';
import { AppError, validationFailed, type FieldProblem } from '../http/errors.js';
import { lockForWrite } from '../http/preconditions.js';
import { insertStockMovement } from '../variants/stock-movement-repository.js';
import { findVariantByIdForUpdate } from '../variants/variant-repository.js';
import { lockVariantsOfLines } from './line-variants.js';

const MAX_STOCK = 1e9;

export interface StockNote {
  reason: string;
  reference: string | null;
  context: EventContext;
}

/**
 * Moves one locked variant's stock: one movement, one event, the version moves on. A commit of a
 * reservation takes its units off `reserved` in the same update (`reservedAfter`).
 */
export async function moveStock(trx: Transaction<Database>, variant: VariantRow, stockAfter: number, note: StockNote, reservedAfter = variant.reserved): Promise<VariantRow> {
  const updated = await trx
    .updateTable('variants')
    .set({ stock: stockAfter, reserved: reservedAfter, version: sql`version + 1`, updated_at: new Date() })
    .where('id', '=', variant.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  const delta = stockAfter - variant.stock;
  await insertStockMovement(trx, { variant_id: variant.id, delta, stock_after: stockAfter, reason: note.reason, reference: note.reference, actor_id: note.context.actorId });
  const reservedMoved = reservedAfter !== variant.reserved;
  await record(
    trx,
    {
      type: 'variant.stock_changed',
      subjectType: 'variant',
      subjectId: variant.id,
      data: {
        before: reservedMoved ? { stock: variant.stock, reserved: variant.reserved } : { stock: variant.stock },
        after: reservedMoved ? { stock: stockAfter, reserved: reservedAfter } : { stock: stockAfter },
        delta,
        stock_after: stockAfter,
        reason: note.reason,
        reference: note.reference,
      },
    },
    note.context,
  );
  return updated;
}

const shortBy = (variant: VariantRow, stockAfter: number) =>
  `would leave ${stockAfter} units with ${variant.reserved} reserved (${variant.stock} on hand)`;

/** PUT /api/variants/{id}/stock: a delta or a new level, never below what is reserved. */
export async function changeStock(
  trx: Transaction<Database>,
  variantId: string,
  ifMatch: string | undefined,
  change: { delta: number } | { stock: number },
  note: StockNote,
): Promise<VariantRow> {
  const variant = await lockForWrite(() => findVariantByIdForUpdate(trx, variantId), ifMatch, 'variant');
  const stockAfter = 'delta' in change ? variant.stock + change.delta : change.stock;
  const path = 'delta' in change ? '/delta' : '/stock';
  if (stockAfter > MAX_STOCK) throw validationFailed(path, `would take the stock above ${MAX_STOCK}`);
  if (stockAfter < variant.reserved) throw new AppError('insufficient_stock', `The stock ${shortBy(variant, stockAfter)}.`, [{ path, message: shortBy(variant, stockAfter) }]);
  return moveStock(trx, variant, stockAfter, note);
}

/**
 * POST /api/stock-adjustments: every line or none. The rows are locked in id order, so two
 * adjustments over the same variants, with their lines in any order, queue instead of
 * deadlocking; every line that falls short is reported.
 */
export function adjustStock(db: Kysely<Database>, lines: { variant_id: string; delta: number }[], note: StockNote): Promise<VariantRow[]> {
  return inTransaction(db, async (trx) => {
    const variants = await lockVariantsOfLines(trx, lines.map((line) => line.variant_id));
    const short: FieldProblem[] = [];
    const tooMuch: FieldProblem[] = [];
    lines.forEach((line, index) => {
      const variant = variants[index]!;
      const stockAfter = variant.stock + line.delta;
      if (stockAfter < variant.reserved) short.push({ path: `/lines/${index}`, message: shortBy(variant, stockAfter) });
      if (stockAfter > MAX_STOCK) tooMuch.push({ path: `/lines/${index}/delta`, message: `would take the stock above ${MAX_STOCK}` });
    });
    if (tooMuch.length > 0) throw new AppError('validation_failed', 'The request does not match the schema.', tooMuch);
    if (short.length > 0) throw new AppError('insufficient_stock', 'Some lines would take the stock below what is reserved; nothing changed.', short);
    const results: VariantRow[] = [];
    for (const [index, line] of lines.entries()) {
      const variant = variants[index]!;
      results.push(await moveStock(trx, variant, variant.stock + line.delta, note));
    }
    return results;
  });
}
