import type { Transaction } from 'kysely';
import type { Database, VariantRow } from '../db/tables.js';
import { AppError, validationFailed } from '../http/errors.js';
import { lockVariantsInIdOrder } from './stock-repository.js';

/**
 * Locks the variants that the lines of an adjustment or a reservation name and returns them in
 * the order of the lines. Rows are locked in id order, so two requests over the same variants,
 * with their lines in any order, queue behind each other instead of deadlocking. A variant named
 * twice is a 400 and a line naming no variant a 404, each with the line's path.
 */
export async function lockVariantsOfLines(trx: Transaction<Database>, variantIds: string[]): Promise<VariantRow[]> {
  const ids = distinctVariantsOfLines(variantIds);
  const locked = await lockVariantsInIdOrder(trx, ids);
  const byId = new Map(locked.map((variant) => [variant.id, variant]));
  const missing = ids.flatMap((id, index) => (byId.has(id) ? [] : [{ path: `/lines/${index}/variant_id`, message: 'names no variant' }]));
  if (missing.length > 0) throw new AppError('not_found', 'A line names no variant.', missing);
  return ids.map((id) => byId.get(id)!);
}

/** The lines' variant ids, lower-cased; a variant named twice is a 400 with the second line's path. */
export function distinctVariantsOfLines(variantIds: string[]): string[] {
  const ids = variantIds.map((id) => id.toLowerCase());
  const repeated = ids.findIndex((id, index) => ids.indexOf(id) !== index);
  if (repeated !== -1) throw validationFailed(`/lines/${repeated}/variant_id`, 'names a variant another line names already');
  return ids;
}

/**
 * The variants the lines name, locked in id order, where a variant may be named by several lines
 * (at different locations): the rows, distinct, in id order; a line naming no variant is a 404
 * with its path.
 */
export async function lockVariantsNamedByLines(trx: Transaction<Database>, variantIds: string[]): Promise<VariantRow[]> {
  const ids = variantIds.map((id) => id.toLowerCase());
  const locked = await lockVariantsInIdOrder(trx, [...new Set(ids)]);
  const found = new Set(locked.map((variant) => variant.id));
  const missing = ids.flatMap((id, index) => (found.has(id) ? [] : [{ path: `/lines/${index}/variant_id`, message: 'names no variant' }]));
  if (missing.length > 0) throw new AppError('not_found', 'A line names no variant.', missing);
  return locked;
}
