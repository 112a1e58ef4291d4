import type { Transaction } from 'kysely';
import type { Database, VariantRow } from '../db/tables.js';
import { AppError, validationFailed, type FieldProblem } from '../http/errors.js';
import { distinctVariantsOfLines, lockVariantsNamedByLines } from './line-variants.js';
import { levelsOfVariants } from './stock-level-repository.js';
import { levelAt, MAX_STOCK, namedLocations, setLevel, shortAt, type StockNote } from './stock-service.js';

export interface TransferInput {
  from_location_id: string;
  to_location_id: string;
  lines: { variant_id: string; quantity: number }[];
}

/**
 * POST /api/stock-transfers (API.md section 21): moves units of each line's variant from one
 * location to another, all or nothing, one movement out and one in per line (each with its
 * `variant.stock_changed`, the total dipping by the quantity between them), never below the
 * source's `reserved`. Rows are locked as every stock change locks them: the two locations
 * (key share, id order), then the variants (id order), then their levels under the variants'
 * locks, so transfers, adjustments and reservations over the same rows queue, never deadlock.
 * An inactive destination is 409 `location_inactive`; an inactive source may be emptied.
 */
export async function transferStock(trx: Transaction<Database>, input: TransferInput, note: StockNote): Promise<VariantRow[]> {
  const from = input.from_location_id.toLowerCase();
  const to = input.to_location_id.toLowerCase();
  if (from === to) throw validationFailed('/to_location_id', 'names the location stock leaves; a transfer moves it between two locations');
  const ids = distinctVariantsOfLines(input.lines.map((line) => line.variant_id));
  const locations = await namedLocations(trx, [
    { id: from, path: '/from_location_id' },
    { id: to, path: '/to_location_id' },
  ]);
  const source = locations.get(from)!;
  const destination = locations.get(to)!;
  if (destination.status !== 'active') {
    throw new AppError('location_inactive', `Location ${destination.code} is inactive: it takes no stock by transfer.`, [{ path: '/to_location_id', message: 'names an inactive location' }]);
  }
  const variants = new Map((await lockVariantsNamedByLines(trx, ids)).map((variant) => [variant.id, variant]));
  const levels = await levelsOfVariants(trx, ids);
  const short: FieldProblem[] = [];
  const tooMuch: FieldProblem[] = [];
  input.lines.forEach((line, index) => {
    const leaving = levelAt(levels, ids[index]!, from);
    const arriving = levelAt(levels, ids[index]!, to);
    if (leaving.stock - line.quantity < leaving.reserved) short.push({ path: `/lines/${index}`, message: shortAt(leaving, leaving.stock - line.quantity, source.code) });
    if (arriving.stock + line.quantity > MAX_STOCK) tooMuch.push({ path: `/lines/${index}/quantity`, message: `would take the stock at ${destination.code} above ${MAX_STOCK}` });
  });
  if (tooMuch.length > 0) throw new AppError('validation_failed', 'The request does not match the schema.', tooMuch);
  if (short.length > 0) throw new AppError('insufficient_stock', 'Some lines would take the source below what is reserved there; nothing moved.', short);
  const moved: VariantRow[] = [];
  for (const [index, line] of input.lines.entries()) {
    const variant = variants.get(ids[index]!)!;
    const leaving = levelAt(levels, variant.id, from);
    const arriving = levelAt(levels, variant.id, to);
    const out = await setLevel(trx, variant, leaving, leaving.stock - line.quantity, note);
    moved.push(await setLevel(trx, out, arriving, arriving.stock + line.quantity, note, { moveVersion: false }));
  }
  return moved;
}
