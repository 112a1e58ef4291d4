import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { levelMismatches } from './reconciliation-repository.js';
import { reservedMismatches, unitsHeldByOpenLines } from './reservation-repository.js';
import { lockVariant, takeReconciliationTurn, writeReserved } from './stock-repository.js';

/** At most this many differences are repaired in one pass; the rest wait for the next. */
const REPAIR_BATCH = 100;

export interface ReconciliationPass {
  /** Variants whose `reserved` differed from their open lines when the pass read them; undefined when another instance had the turn. */
  found?: number;
  /** Of those, the ones set right (recounted under the row's lock). */
  repaired: number;
  /**
   * Figures per location found differing from what they are made of (a level's `reserved` from
   * its open allocations, its `stock` from its movements, a variant's units available at inactive
   * locations from those levels), up to REPAIR_BATCH; undefined when another instance had the turn.
   */
  levelsFound?: number;
}

/**
 * The proof that `reserved` equals the open reservation lines of each variant. The reservation
 * code keeps the counter in the same transactions that open and close lines, and no database
 * trigger checks it (a check per commit had to sum every open line under the hot row's lock).
 * One instance a pass (the advisory lock; the others skip it) finds any difference, logs it as
 * an error for the operator (the metric `inventory_reserved_mismatches` and its alert, README)
 * and repairs it: under the variant's lock, recounted, so a reservation in flight is either
 * wholly counted or not yet. Open lines of a variant that is gone, or holding more than its
 * stock, cannot be set right by a counter: they are reported again each pass. The same pass
 * then checks the figures per location (API.md section 21: reconciliation-repository.ts) and
 * reports each difference as an error (the metric `inventory_level_mismatches`), repairing none.
 */
export async function reconcileReserved(db: Kysely<Database>, log: FastifyBaseLogger): Promise<ReconciliationPass> {
  const pass = await inTransaction(db, async (trx): Promise<ReconciliationPass> => {
    if (!(await takeReconciliationTurn(trx))) return { repaired: 0 };
    const mismatches = await reservedMismatches(trx, REPAIR_BATCH);
    let repaired = 0;
    // In variant-id order (the query's), the order every writer locks variants in.
    for (const mismatch of mismatches) {
      const variant = await lockVariant(trx, mismatch.variant_id);
      const held = variant ? await unitsHeldByOpenLines(trx, variant.id) : mismatch.held;
      const outcome = !variant ? 'variant gone' : held === variant.reserved ? 'equal when recounted' : held > variant.stock ? 'held above stock' : 'repaired';
      if (outcome === 'repaired') {
        await writeReserved(trx, variant!.id, held);
        repaired++;
      }
      if (outcome !== 'equal when recounted') log.error({ variantId: mismatch.variant_id, counted: mismatch.counted, held: mismatch.held, outcome }, "a variant's reserved differed from its open reservation lines");
    }
    return { found: mismatches.length, repaired };
  });
  if (pass.found === undefined) return pass;
  // Read after the repairs committed (they set levels' reserved right with their variant's), in
  // a transaction of its own: summing every level's movements must not keep the repaired
  // variants locked against checkouts. What is left is for the operator.
  try {
    const levelsFound = await inTransaction(db, async (trx) => {
      if (!(await takeReconciliationTurn(trx))) return undefined;
      const levels = await levelMismatches(trx, REPAIR_BATCH);
      for (const mismatch of levels) log.error(mismatch, 'a figure per location differed from what it is made of');
      return levels.length;
    });
    return { ...pass, levelsFound };
  } catch (error) {
    // The repairs committed: their figures are still this pass's (the metrics), the check goes again next pass.
    log.error({ err: error }, 'the check of the figures per location failed');
    return pass;
  }
}
