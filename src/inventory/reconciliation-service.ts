import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { unitsHeldByOpenLines } from './reservation-repository.js';
import { lockVariant, reservedMismatches, writeReserved } from './stock-repository.js';

/** At most this many differences are repaired in one pass; the rest wait for the next. */
const REPAIR_BATCH = 100;

export interface ReconciliationPass {
  /** Variants whose `reserved` differed from their open lines when the pass read them. */
  found: number;
  /** Of those, the ones set right (recounted under the row's lock). */
  repaired: number;
}

/**
 * The proof that `reserved` equals the open reservation lines of each variant. The reservation
 * code keeps the counter in the same transactions that open and close lines, and no database
 * trigger checks it (a check per commit had to sum every open line under the hot row's lock).
 * This pass finds any difference, logs it as an error for the operator (the metric
 * `inventory_reserved_mismatches` and its alert, README), and repairs it: under the variant's
 * lock, recounted, so a reservation in flight is either wholly counted or not yet. A count above
 * the stock is left as it is and reported again, since no repair can make that true.
 */
export async function reconcileReserved(db: Kysely<Database>, log: FastifyBaseLogger): Promise<ReconciliationPass> {
  const mismatches = await reservedMismatches(db, REPAIR_BATCH);
  let repaired = 0;
  for (const mismatch of mismatches) {
    const outcome = await inTransaction(db, async (trx) => {
      const variant = await lockVariant(trx, mismatch.variant_id);
      if (!variant) return 'variant gone';
      const held = await unitsHeldByOpenLines(trx, variant.id);
      if (held === variant.reserved) return 'already equal';
      if (held > variant.stock) return 'held above stock';
      await writeReserved(trx, variant.id, held);
      return 'repaired';
    });
    if (outcome === 'repaired') repaired++;
    log.error({ variantId: mismatch.variant_id, counted: mismatch.counted, held: mismatch.held, outcome }, 'a variant\'s reserved differed from its open reservation lines');
  }
  return { found: mismatches.length, repaired };
}
