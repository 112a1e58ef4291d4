import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { Database, ReservationAllocationRow, ReservationRow, VariantRow } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { recordingSteps, recordMany, SERVICE_CONTEXT, type EventContext, type EventOfRow, type NewEvent } from '../events/event-recorder.js';
import { AppError, notFound, type FieldProblem } from '../http/errors.js';
import { distinctVariantsOfLines } from './line-variants.js';
import {
  claimLapsedReservations,
  closeReservations,
  closingSteps,
  insertAllocations,
  insertReservationIfAvailable,
  lockReservation,
  readReservation,
  stillOpen,
  type Reservation,
} from './reservation-repository.js';
import type { ReservationInput } from './reservation-schemas.js';
import { locationsByIds } from './stock-level-repository.js';
import { holdingStep, holdUnits, releaseUnits, variantsByIds } from './stock-repository.js';
import { commitHeldUnits } from './stock-service.js';

/** A user's reservations with their lines, for a data export (privacy). */
export { reservationsCreatedByPage, withLinesOfPage } from './reservation-repository.js';

const DEFAULT_EXPIRES_IN = 900;
const EXPIRY_BATCH = 100;

const linesOf = (reservation: Reservation) => reservation.lines.map((line) => ({ variant_id: line.variant_id, quantity: line.quantity }));

/** What a variant's active locations have available (API.md section 21: inactive ones take no new allocation). */
const availableOf = (variant: VariantRow) => variant.stock - variant.reserved - variant.available_at_inactive_locations;

const shortfall = (variant: VariantRow, quantity: number) =>
  `asks for ${quantity} units; ${availableOf(variant)} available (${variant.stock} on hand, ${variant.reserved} reserved)`;

/** The lines' positions in the order of their variants' ids: rows are always locked in that order, so two requests never deadlock. */
const inIdOrder = (ids: string[]) => ids.map((id, index) => ({ id, index })).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

/** Attempts at the insert when the units its check found short are available again at once. */
const INSERT_ATTEMPTS = 3;

/**
 * POST /api/reservations: every line is held, or none. Lock last, as a flash sale needs: the
 * reservation, its lines and its event are written by one statement that first reads the
 * variants without a lock (a sold-out or unknown variant is refused before anything is written),
 * touching no variant; then each line holds its units with one statement (holdUnits: the
 * variant's row locked, then the level of the location chosen, available >= quantity checked
 * under that lock; a split or a retry only when the first location chosen could not), its
 * allocations are written, and the transaction commits. A reservation of one line (a flash
 * sale's) holds its units and writes its allocation in the insert's statement, one round trip
 * less. A variant's row is locked only for those updates and the commit, whatever else the
 * request writes and however many carts hold it. Named locations are checked first (404, 409
 * `location_inactive`).
 */
export async function createReservation(trx: Transaction<Database>, input: ReservationInput, context: EventContext): Promise<Reservation> {
  const ids = distinctVariantsOfLines(input.lines.map((line) => line.variant_id));
  const named = input.lines.map((line) => line.location_id?.toLowerCase());
  await assertNamedLocationsTakeUnits(trx, named);
  const split = input.split ?? true;
  const made = { lines: input.lines, reference: input.reference ?? null, expiresIn: input.expires_in ?? DEFAULT_EXPIRES_IN, createdBy: context.actorId };
  const recordedWith = (madeStep: string) => recordingSteps([], [createdEvent(madeStep, input)], context);
  // Several lines hold one at a time, in id order, so that two reservations never deadlock.
  const holdWith =
    ids.length === 1 ? { after: (madeStep: string) => holdingStep(ids[0]!, input.lines[0]!.quantity, sql`exists (select 1 from ${sql.table(madeStep)})`, named[0]) } : undefined;
  let inserted: Awaited<ReturnType<typeof insertReservationIfAvailable>>;
  for (let attempt = 1; ; attempt++) {
    inserted = await insertReservationIfAvailable(trx, made, recordedWith, holdWith);
    if (inserted) break;
    // Refused, nothing written: the variants read again say which lines are missing or short.
    refuseUnavailable(input, await variantsByIds(trx, ids));
    // None is now: units came back between the two statements. Past the last attempt, every line is listed as it stands.
    if (attempt === INSERT_ATTEMPTS) throw unitsKeptChanging(input, await variantsByIds(trx, ids));
  }
  const { reservation } = inserted;
  // The statement's hold may have found its location's units gone, or the line may need a split: it locked the variant, so holdUnits answers exactly.
  if (holdWith && inserted.held) return reservation;
  const allocations: ReservationAllocationRow[] = [];
  const order = inIdOrder(ids);
  for (const [position, { id, index }] of order.entries()) {
    const quantity = input.lines[index]!.quantity;
    const held = await holdUnits(trx, id, quantity, { locationId: named[index], split });
    if (held) {
      allocations.push(...held.map((units) => ({ reservation_id: reservation.id, position: index, ...units })));
      continue;
    }
    // Others took the units (or deleted the variant) since the read: lock nothing more, and the
    // transaction rolls back, answering for this line and every line not yet held that is short now.
    await refuseAfterFailedHold(trx, input, order.slice(position));
  }
  await insertAllocations(trx, allocations);
  return { ...reservation, allocations: allocations.sort((a, b) => a.position - b.position || (a.location_id < b.location_id ? -1 : 1)) };
}

/**
 * The locations reservation lines name (undefined: the line names none) exist (else 404 with the
 * lines' paths) and are active (else 409 `location_inactive`): an inactive location gets no new
 * allocation.
 */
async function assertNamedLocationsTakeUnits(trx: Transaction<Database>, named: (string | undefined)[]): Promise<void> {
  const ids = [...new Set(named.filter((id): id is string => id !== undefined))];
  if (ids.length === 0) return;
  const found = new Map((await locationsByIds(trx, ids)).map((location) => [location.id, location]));
  const missing = named.flatMap((id, index) => (id !== undefined && !found.has(id) ? [{ path: `/lines/${index}/location_id`, message: 'names no location' }] : []));
  if (missing.length > 0) throw new AppError('not_found', 'A line names no location.', missing);
  const inactive = named.flatMap((id, index) => (id !== undefined && found.get(id)!.status !== 'active' ? [{ path: `/lines/${index}/location_id`, message: 'names an inactive location' }] : []));
  if (inactive.length > 0) throw new AppError('location_inactive', 'An inactive location takes no new reservation.', inactive);
}

/**
 * POST /api/reservations of one line, in one statement outside any transaction (Access.oneStatement):
 * the hold first, under `letIn` (the caller check), then the reservation, its line and its event,
 * only if the hold took the units. The variant's row is locked from the hold to the statement's
 * end, with no round trip in between. Undefined when nothing was written (a line short, a
 * variant unknown, the caller refused, or several lines): the transaction of createReservation
 * then answers.
 */
export async function reserveInOneStatement(db: Kysely<Database>, input: ReservationInput, context: EventContext, letIn: () => RawBuilder<boolean>): Promise<Reservation | undefined> {
  const [line, ...others] = input.lines;
  if (!line || others.length > 0) return undefined;
  const made = { lines: input.lines, reference: input.reference ?? null, expiresIn: input.expires_in ?? DEFAULT_EXPIRES_IN, createdBy: context.actorId };
  const recordedWith = (madeStep: string) => recordingSteps([], [createdEvent(madeStep, input)], context);
  const inserted = await insertReservationIfAvailable(db, made, recordedWith, { before: holdingStep(line.variant_id.toLowerCase(), line.quantity, letIn(), line.location_id?.toLowerCase()) });
  return inserted?.reservation;
}

/**
 * A reservation's `reservation.created`, built in SQL from its row as the insert made it (its
 * `expires_at` is the database's clock's), in the form an event's data takes in JSON.
 */
function createdEvent(madeStep: string, input: ReservationInput): EventOfRow {
  const column = (name: 'id' | 'status' | 'reference' | 'expires_at') => sql.ref(`${madeStep}.${name}`);
  const lines = input.lines.map((line) => ({ variant_id: line.variant_id.toLowerCase(), quantity: line.quantity }));
  return {
    type: 'reservation.created',
    subjectType: 'reservation',
    step: madeStep,
    subjectId: column('id'),
    data: sql`jsonb_build_object('after', jsonb_build_object(
      'status', ${column('status')}, 'lines', ${JSON.stringify(lines)}::jsonb, 'reference', ${column('reference')},
      'expires_at', to_char(${column('expires_at')} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))`,
  };
}

/**
 * The answer when a hold fails: a named location that is inactive now is 409
 * `location_inactive`; else the failed line (the first of `pending`) and the lines after it
 * are read again without a lock; every one that names no variant (404) or falls short (409) is
 * listed, and the failed line always is, since its units were taken after they were read.
 */
async function refuseAfterFailedHold(trx: Transaction<Database>, input: ReservationInput, pending: { id: string; index: number }[]): Promise<never> {
  // A named location made inactive since the first check fails the hold too (the hold reads the status afresh): it is that 409.
  await assertNamedLocationsTakeUnits(trx, input.lines.map((line) => line.location_id?.toLowerCase()));
  const variants = await variantsByIds(trx, pending.map(({ id }) => id));
  const missing = pending
    .flatMap(({ index }, at) => (variants[at] ? [] : [index]))
    .sort((a, b) => a - b)
    .map((index) => ({ path: `/lines/${index}/variant_id`, message: 'names no variant' }));
  if (missing.length > 0) throw new AppError('not_found', 'A line names no variant.', missing);
  const failed = pending[0]!.index;
  const short: FieldProblem[] = pending
    .map(({ index }, at) => ({ index, variant: variants[at]!, quantity: input.lines[index]!.quantity }))
    .filter(({ index, variant, quantity }) => index === failed || availableOf(variant) < quantity)
    .sort((a, b) => a.index - b.index)
    .map(({ index, variant, quantity }) => ({
      path: `/lines/${index}`,
      message: index === failed ? `${shortfall(variant, quantity)}; other requests took the units after they were read` : shortfall(variant, quantity),
    }));
  throw new AppError('insufficient_stock', 'Some lines ask for more than is available; nothing is reserved.', short);
}

/** The 409 when the units a reservation asks for were short at its insert and available again at its read, every attempt. */
function unitsKeptChanging(input: ReservationInput, variants: (VariantRow | undefined)[]): AppError {
  const lines = input.lines.map((line, index) => ({
    path: `/lines/${index}`,
    message: variants[index] ? `${shortfall(variants[index], line.quantity)}; the units available kept changing while it was asked` : 'names no variant',
  }));
  return new AppError('insufficient_stock', 'The units available kept changing; nothing is reserved. Try again.', lines);
}

/**
 * Refuses the lines whose variants (read in `variants`, in the order of the lines) are missing,
 * with a 404 listing their paths, or have fewer units available than asked, with a 409
 * `insufficient_stock` listing every short line.
 */
function refuseUnavailable(input: ReservationInput, variants: (VariantRow | undefined)[]): void {
  const missing = variants.flatMap((variant, index) => (variant ? [] : [index]));
  if (missing.length > 0) throw new AppError('not_found', 'A line names no variant.', missing.map((index) => ({ path: `/lines/${index}/variant_id`, message: 'names no variant' })));
  const short: FieldProblem[] = variants.flatMap((variant, index) => {
    const quantity = input.lines[index]!.quantity;
    return availableOf(variant!) < quantity ? [{ path: `/lines/${index}`, message: shortfall(variant!, quantity) }] : [];
  });
  if (short.length > 0) throw new AppError('insufficient_stock', 'Some lines ask for more than is available; nothing is reserved.', short);
}

type Closing = 'committed' | 'released' | 'expired';

/**
 * The units the reservations hold, summed per variant and location, in the order rows are
 * locked in (variant id, then location id).
 */
function heldAt(reservations: Reservation[]): { id: string; locationId: string; quantity: number }[] {
  const held = new Map<string, { id: string; locationId: string; quantity: number }>();
  for (const reservation of reservations) {
    for (const allocation of reservation.allocations) {
      const variantId = reservation.lines.find((line) => line.position === allocation.position)!.variant_id;
      const key = `${variantId} ${allocation.location_id}`;
      const sum = held.get(key) ?? { id: variantId, locationId: allocation.location_id, quantity: 0 };
      sum.quantity += allocation.quantity;
      held.set(key, sum);
    }
  }
  return [...held.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : a.locationId < b.locationId ? -1 : a.locationId > b.locationId ? 1 : 0));
}
const EVENT_OF = { committed: 'reservation.committed', released: 'reservation.released', expired: 'reservation.expired' } as const;

/**
 * Closes locked, active reservations: gives their units back (or, committing, takes them off the
 * stock). The reservations are written first and the variants last, in id order, so a hot
 * variant's row is locked only for its own update and what follows it: a release's or an
 * expiry's events are recorded before it; a commit closes its reservations and records their
 * events, with the `variant.stock_changed` each update makes, in the updates' own statements,
 * so the lock is held for the update and the commit only (one round trip less than the bare
 * lock-last reference, and the whole commit two statements fewer: bench/README.md).
 */
async function close(trx: Transaction<Database>, reservations: Reservation[], status: Closing, context: EventContext): Promise<Reservation[]> {
  const ids = reservations.map((reservation) => reservation.id);
  const inOrder = heldAt(reservations);
  let closed: ReservationRow[] = [];
  if (status === 'committed') {
    // The first variant's update closes the reservation and records its event; each variant's stock event goes with its own.
    const [reservation, ...others] = reservations;
    if (!reservation || others.length > 0) throw new Error('a commit closes one reservation');
    const note = { reason: 'reservation committed', reference: reservation.reference, context };
    const committed = { given: [], ofRows: [committedEvent('closed', reservation)] };
    for (const [position, { id, locationId, quantity }] of inOrder.entries()) {
      if (position === 0) closed = await commitHeldUnits<ReservationRow>(trx, id, locationId, quantity, note, committed, { steps: closingSteps(ids, status), answer: 'closed' });
      else await commitHeldUnits(trx, id, locationId, quantity, note, { given: [] });
    }
  } else {
    const events: NewEvent[] = reservations.map((reservation) => ({
      type: EVENT_OF[status],
      subjectType: 'reservation',
      subjectId: reservation.id,
      data: { before: { status: 'active' }, after: { status }, lines: linesOf(reservation), reference: reservation.reference },
    }));
    closed = await closeReservations(trx, ids, status);
    await recordMany(trx, events, context);
    for (const { id, locationId, quantity } of inOrder) await releaseUnits(trx, id, locationId, quantity);
  }
  return closed.map((row) => {
    const { lines, allocations } = reservations.find((open) => open.id === row.id)!;
    return { ...row, lines, allocations };
  });
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

/**
 * POST /api/reservations/{id}/commit of a reservation of one line, in one statement outside any
 * transaction (Access.oneStatement), after an unlocked read of what it commits: the statement
 * closes the reservation only if it is still active, its time not up, and `letIn` (the caller
 * check) holds, and takes its units, writes its movement and records its events only if it closed
 * it. The variant's row is locked from its update to the statement's end, with no round trip in
 * between. Undefined when nothing was written (the reservation unknown, closed, lapsed or of
 * several lines, or the caller refused): the transaction of finishReservation then answers.
 */
export async function commitInOneStatement(db: Kysely<Database>, id: string, context: EventContext, letIn: () => RawBuilder<boolean>): Promise<Reservation | undefined> {
  const reservation = await readReservation(db, id);
  if (!reservation || reservation.status !== 'active' || reservation.lapsed || reservation.lines.length !== 1 || reservation.allocations.length !== 1) return undefined;
  const line = reservation.lines[0]!;
  const locationId = reservation.allocations[0]!.location_id;
  const note = { reason: 'reservation committed', reference: reservation.reference, context };
  // The units are taken only if the reservation closes, so it closes only if they can be taken:
  // its variant is there and holds them (a variant with units reserved cannot be deleted).
  const heldStill = sql<boolean>`exists (select 1 from stock_levels where variant_id = ${line.variant_id} and location_id = ${locationId} and reserved >= ${line.quantity})`;
  // Unchanged since the read (its row's version): a reallocation meanwhile moved its units elsewhere, and the transaction answers.
  const unchanged = sql<boolean>`xmin::text = ${reservation.row_version}`;
  const closing = closingSteps([reservation.id], 'committed', sql`${stillOpen} and ${unchanged} and ${heldStill} and ${letIn()}`);
  const [closed] = await commitHeldUnits<ReservationRow>(db, line.variant_id, locationId, line.quantity, note, { given: [], ofRows: [committedEvent('closed', reservation)] }, { steps: closing, answer: 'closed', required: true });
  return closed && { ...closed, lines: reservation.lines, allocations: reservation.allocations };
}

/**
 * A commit's `reservation.committed`, made of the reservation's row as its closing left it (one
 * reservation: a commit closes one), so that it is recorded only if the reservation closed.
 */
function committedEvent(closedStep: string, reservation: Reservation): EventOfRow {
  return {
    type: EVENT_OF.committed,
    subjectType: 'reservation',
    step: closedStep,
    subjectId: sql.ref(`${closedStep}.id`),
    data: sql`jsonb_build_object('before', jsonb_build_object('status', 'active'), 'after', jsonb_build_object('status', ${sql.ref(`${closedStep}.status`)}),
      'lines', ${JSON.stringify(linesOf(reservation))}::jsonb, 'reference', ${sql.ref(`${closedStep}.reference`)})`,
  };
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
