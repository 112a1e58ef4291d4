import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { Database, VariantRow } from '../db/tables.js';
import { record, recordingSteps, type EventContext, type EventOfRow, type NewEvent } from '../events/event-recorder.js';
import { AppError, validationFailed, type FieldProblem } from '../http/errors.js';
import { lockForWrite } from '../http/preconditions.js';
import { lockVariantsOfLines } from './line-variants.js';
import { insertStockMovement, insertStockMovements } from './stock-movement-repository.js';
import { insertVariantsWithStock, lockVariant, takeHeldUnits, writeStock, type StockedVariant } from './stock-repository.js';

const MAX_STOCK = 1e9;

/** Why a stock moves, and who moved it: written on its movement and its event. */
export interface StockNote {
  reason: string;
  reference: string | null;
  context: EventContext;
  /** More for the event's `data` (an import's id). */
  data?: Record<string, unknown>;
}

/**
 * The one owner of stock: every change of a variant's `stock` and `reserved` goes through here
 * (reservations through reservation-service.ts), with its movement in the same transaction, so a
 * variant's stock is always the sum of its movements. The variants area inserts a variant with
 * no stock and calls openStock; an import's batch is inserted here with its opening stock
 * (createStockedVariants), its fields as variants decided them.
 */

/**
 * The opening stock of a variant just created (stock 0): its first movement, which belongs to
 * the creation's `variant.created` (API.md section 10), so no event of its own.
 */
export async function openStock(trx: Transaction<Database>, variant: VariantRow, stock: number, note: StockNote): Promise<VariantRow> {
  if (stock === 0) return variant;
  const opened = await writeStock(trx, variant.id, { stock, moveVersion: false });
  await insertStockMovement(trx, { variant_id: variant.id, delta: stock, stock_after: stock, reason: note.reason, reference: note.reference, actor_id: note.context.actorId });
  return opened;
}

/**
 * Many variants just decided by the variants area (an import's batch), inserted with their
 * opening stock, and their first movements: a few statements for the whole batch
 * (insertVariantsWithStock says why the stock goes in with the row). Like openStock, no event:
 * each movement belongs to its `variant.created`.
 */
export async function createStockedVariants(trx: Transaction<Database>, variants: StockedVariant[], note: StockNote): Promise<void> {
  if (variants.length === 0) return;
  await insertVariantsWithStock(trx, variants);
  const stocked = variants.filter((variant) => variant.stock !== 0);
  await insertStockMovements(
    trx,
    stocked.map((variant) => ({ variant_id: variant.id, delta: variant.stock, stock_after: variant.stock, reason: note.reason, reference: note.reference, actor_id: note.context.actorId })),
  );
}

/** The closing movement of a variant about to be deleted; it belongs to the deletion's `variant.deleted`. */
export async function closeStock(trx: Transaction<Database>, variant: VariantRow, note: StockNote): Promise<void> {
  await insertStockMovement(trx, { variant_id: variant.id, delta: -variant.stock, stock_after: 0, reason: note.reason, reference: note.reference, actor_id: note.context.actorId });
}

const shortBy = (variant: VariantRow, stockAfter: number) => `would leave ${stockAfter} units with ${variant.reserved} reserved (${variant.stock} on hand)`;

/** A `stock` below `reserved` is refused: 409 `insufficient_stock` naming the field. */
export function assertAboveReserved(variant: VariantRow, stockAfter: number, path: string): void {
  if (stockAfter < variant.reserved) {
    throw new AppError('insufficient_stock', `${variant.reserved} units are reserved; stock cannot go below that.`, [{ path, message: `must be at least ${variant.reserved} (the reserved units)` }]);
  }
}

/**
 * Moves a locked variant's stock: one movement and one `variant.stock_changed`, whatever made the
 * change (a stock route, a variant's PUT, PATCH or batch update, an import; a commit: commitHeldUnits).
 * The version moves on unless the change this one is part of moved it already (`moveVersion: false`,
 * a PUT that changed other fields too).
 */
export async function setStock(
  trx: Transaction<Database>,
  variant: VariantRow,
  stockAfter: number,
  note: StockNote,
  options: { moveVersion?: boolean } = {},
): Promise<VariantRow> {
  const updated = await writeStock(trx, variant.id, { stock: stockAfter, moveVersion: options.moveVersion ?? true });
  await insertStockMovement(trx, { variant_id: variant.id, delta: stockAfter - variant.stock, stock_after: stockAfter, reason: note.reason, reference: note.reference, actor_id: note.context.actorId });
  await recordStockChange(trx, variant, updated, note);
  return updated;
}

/**
 * A commit's units leave the stock and `reserved` in one update with its movement, which takes
 * the variant's lock; its `variant.stock_changed` and `events`, the commit's own, are recorded by
 * the same statement, so the lock is held for it and the commit only. `alongside`: the steps of
 * the commit's other writes, and the step whose rows the statement answers (takeHeldUnits);
 * `events.ofRows`: the commit's events made of those steps' rows. `db` is the transaction, or the
 * database for a commit in one statement (reservation-service.ts).
 */
export async function commitHeldUnits<Answer = VariantRow>(
  db: Kysely<Database>,
  variantId: string,
  quantity: number,
  note: Omit<StockNote, 'data'>,
  events: { given: NewEvent[]; ofRows?: EventOfRow[] },
  alongside?: { steps: RawBuilder<unknown>; answer: string; required?: boolean },
): Promise<Answer[]> {
  const movement = { reason: note.reason, reference: note.reference, actor_id: note.context.actorId };
  const recordedWith = (updatedStep: string) => recordingSteps(events.given, [...(events.ofRows ?? []), committedStockChange(updatedStep, quantity, note)], note.context);
  return takeHeldUnits<Answer>(db, variantId, quantity, movement, recordedWith, alongside);
}

/**
 * A commit's `variant.stock_changed`: `before` and `after` of `stock` and `reserved`, then the
 * movement's figures, as stockChangeEvent gives a change of stock; built in SQL from the row as
 * the commit's update left it (`updatedStep`), which only that update knows under the lock.
 */
function committedStockChange(updatedStep: string, quantity: number, note: Omit<StockNote, 'data'>): EventOfRow {
  const column = (name: 'id' | 'stock' | 'reserved') => sql.ref(`${updatedStep}.${name}`);
  return {
    type: 'variant.stock_changed',
    subjectType: 'variant',
    step: updatedStep,
    subjectId: column('id'),
    data: sql`jsonb_build_object(
      'before', jsonb_build_object('stock', ${column('stock')} + ${quantity}::integer, 'reserved', ${column('reserved')} + ${quantity}::integer),
      'after', jsonb_build_object('stock', ${column('stock')}, 'reserved', ${column('reserved')}),
      'delta', ${-quantity}::integer, 'stock_after', ${column('stock')}, 'reason', ${note.reason}::text, 'reference', ${note.reference}::text)`,
  };
}

/** The `variant.stock_changed` of a change of stock (a commit's: committedStockChange). */
function stockChangeEvent(before: VariantRow, after: VariantRow, note: StockNote): NewEvent {
  return {
    type: 'variant.stock_changed',
    subjectType: 'variant',
    subjectId: after.id,
    data: {
      before: { stock: before.stock },
      after: { stock: after.stock },
      delta: after.stock - before.stock,
      stock_after: after.stock,
      reason: note.reason,
      reference: note.reference,
      ...note.data,
    },
  };
}

/** Records the `variant.stock_changed` of a change of stock made alone (setStock). */
async function recordStockChange(trx: Transaction<Database>, before: VariantRow, after: VariantRow, note: StockNote): Promise<void> {
  await record(trx, stockChangeEvent(before, after, note), note.context);
}

/** PUT /api/variants/{id}/stock: a delta or a new level, never below what is reserved. */
export async function changeStock(
  trx: Transaction<Database>,
  variantId: string,
  ifMatch: string | undefined,
  change: { delta: number } | { stock: number },
  note: StockNote,
): Promise<VariantRow> {
  const variant = await lockForWrite(() => lockVariant(trx, variantId), ifMatch, 'variant');
  const stockAfter = 'delta' in change ? variant.stock + change.delta : change.stock;
  const path = 'delta' in change ? '/delta' : '/stock';
  if (stockAfter > MAX_STOCK) throw validationFailed(path, `would take the stock above ${MAX_STOCK}`);
  if (stockAfter < variant.reserved) throw new AppError('insufficient_stock', `The stock ${shortBy(variant, stockAfter)}.`, [{ path, message: shortBy(variant, stockAfter) }]);
  return setStock(trx, variant, stockAfter, note);
}

/**
 * POST /api/stock-adjustments: every line or none. The rows are locked in id order, so two
 * adjustments over the same variants, with their lines in any order, queue instead of
 * deadlocking; every line that falls short is reported.
 */
export async function adjustStock(trx: Transaction<Database>, lines: { variant_id: string; delta: number }[], note: StockNote): Promise<VariantRow[]> {
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
    results.push(await setStock(trx, variant, variant.stock + line.delta, note));
  }
  return results;
}
