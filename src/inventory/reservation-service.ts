import type { Kysely, Transaction } from 'kysely';
import type { Database, VariantRow } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { record, SERVICE_CONTEXT, type EventContext } from '../events/event-recorder.js';
import { AppError, notFound, type FieldProblem } from '../http/errors.js';
import { lockVariantsOfLines } from './line-variants.js';
import { claimLapsedReservations, closeReservations, insertReservation, lockReservation, type Reservation } from './reservation-repository.js';
import type { ReservationInput } from './reservation-schemas.js';
import { moveReserved } from './stock-repository.js';
import { setStock } from './stock-service.js';

const DEFAULT_EXPIRES_IN = 900;
const EXPIRY_BATCH = 100;

const linesOf = (reservation: Reservation) => reservation.lines.map((line) => ({ variant_id: line.variant_id, quantity: line.quantity }));

const shortfall = (variant: VariantRow, quantity: number) =>
  `asks for ${quantity} units; ${variant.stock - variant.reserved} available (${variant.stock} on hand, ${variant.reserved} reserved)`;

/** POST /api/reservations: every line is held, or none; `available` is checked under the rows' locks. */
export async function createReservation(trx: Transaction<Database>, input: ReservationInput, context: EventContext): Promise<Reservation> {
  const variants = await lockVariantsOfLines(trx, input.lines.map((line) => line.variant_id));
  const short: FieldProblem[] = input.lines.flatMap((line, index) => {
    const variant = variants[index]!;
    return variant.stock - variant.reserved < line.quantity ? [{ path: `/lines/${index}`, message: shortfall(variant, line.quantity) }] : [];
  });
  if (short.length > 0) throw new AppError('insufficient_stock', 'Some lines ask for more than is available; nothing is reserved.', short);
  for (const [index, line] of input.lines.entries()) await moveReserved(trx, variants[index]!.id, line.quantity);
  const reservation = await insertReservation(trx, {
    lines: input.lines,
    reference: input.reference ?? null,
    expiresIn: input.expires_in ?? DEFAULT_EXPIRES_IN,
    createdBy: context.actorId,
  });
  await record(
    trx,
    {
      type: 'reservation.created',
      subjectType: 'reservation',
      subjectId: reservation.id,
      data: { after: { status: 'active', lines: linesOf(reservation), reference: reservation.reference, expires_at: reservation.expires_at } },
    },
    context,
  );
  return reservation;
}

type Closing = 'committed' | 'released' | 'expired';
const EVENT_OF = { committed: 'reservation.committed', released: 'reservation.released', expired: 'reservation.expired' } as const;

/** Closes locked, active reservations: gives their units back (or, committing, takes them off the stock). */
async function close(trx: Transaction<Database>, reservations: Reservation[], status: Closing, context: EventContext): Promise<Reservation[]> {
  const byVariant = new Map<string, number>();
  for (const line of reservations.flatMap((reservation) => reservation.lines)) byVariant.set(line.variant_id, (byVariant.get(line.variant_id) ?? 0) + line.quantity);
  const variants = await lockVariantsOfLines(trx, [...byVariant.keys()]);
  for (const variant of variants) {
    const quantity = byVariant.get(variant.id)!;
    if (status === 'committed') {
      const reference = reservations[0]!.reference;
      await setStock(trx, variant, variant.stock - quantity, { reason: 'reservation committed', reference, context }, { reservedAfter: variant.reserved - quantity });
    } else {
      await moveReserved(trx, variant.id, -quantity);
    }
  }
  const closed = await closeReservations(trx, reservations.map((reservation) => reservation.id), status);
  return Promise.all(
    closed.map(async (row) => {
      const reservation = { ...row, lines: reservations.find((open) => open.id === row.id)!.lines };
      const data = { before: { status: 'active' }, after: { status }, lines: linesOf(reservation), reference: reservation.reference };
      await record(trx, { type: EVENT_OF[status], subjectType: 'reservation', subjectId: reservation.id, data }, context);
      return reservation;
    }),
  );
}

/**
 * Commit or release. Repeating the action the reservation went through answers it unchanged;
 * any other closed state is 409 `reservation_closed`. A reservation whose time is up but that
 * the expiry has not reached yet is expired here, so it ends in exactly one state.
 */
export async function finishReservation(
  trx: Transaction<Database>,
  id: string,
  status: 'committed' | 'released',
  context: EventContext,
): Promise<Reservation | { closedAs: Reservation['status'] }> {
  const reservation = await lockReservation(trx, id);
  if (!reservation) throw notFound('reservation');
  if (reservation.status === status) return reservation;
  if (reservation.status !== 'active') return { closedAs: reservation.status };
  if (reservation.lapsed) {
    // Expired here, and that commits with the 409 that follows: it ends in exactly one state.
    await close(trx, [reservation], 'expired', SERVICE_CONTEXT);
    return { closedAs: 'expired' };
  }
  const [finished] = await close(trx, [reservation], status, context);
  return finished!;
}

/** The answer to a commit or release that found the reservation in another state. */
export const reservationClosed = (closedAs: string, wanted: string) =>
  new AppError('reservation_closed', `The reservation is ${closedAs}; it can no longer be ${wanted}.`);

/** One pass of the expiry job: closes lapsed reservations in batches until none is left. */
export async function expireLapsedReservations(db: Kysely<Database>): Promise<number> {
  let expired = 0;
  for (;;) {
    const batch = await inTransaction(db, async (trx) => {
      const lapsed = await claimLapsedReservations(trx, EXPIRY_BATCH);
      if (lapsed.length > 0) await close(trx, lapsed, 'expired', SERVICE_CONTEXT);
      return lapsed.length;
    });
    expired += batch;
    if (batch < EXPIRY_BATCH) return expired;
  }
}
