import type { Transaction } from 'kysely';
import type { Database, ReservationAllocationRow } from '../db/tables.js';
import { record, type EventContext } from '../events/event-recorder.js';
import { AppError, notFound, type FieldProblem } from '../http/errors.js';
import { distinctVariantsOfLines } from './line-variants.js';
import { lockReservation, replaceAllocations, type Reservation } from './reservation-repository.js';
import type { ReallocationInput } from './reservation-schemas.js';
import { reservationClosed } from './reservation-service.js';
import { levelsOfVariants, moveReserved, shareLocations } from './stock-level-repository.js';
import { levelAt } from './stock-service.js';
import { lockVariantsInIdOrder, moveVersions } from './stock-repository.js';

/** A line's allocations as the request or the reservation gives them, by location id. */
type Allocated = Map<string, number>;

const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The allocations of the reservation's line at `position`, by location id. */
const allocatedAt = (reservation: Reservation, position: number): Allocated =>
  new Map(reservation.allocations.filter((allocation) => allocation.position === position).map((allocation) => [allocation.location_id, allocation.quantity]));

const sameAllocations = (a: Allocated, b: Allocated) => a.size === b.size && [...a].every(([locationId, quantity]) => b.get(locationId) === quantity);

const asList = (allocated: Allocated) => [...allocated].sort(([a], [b]) => byId(a, b)).map(([location_id, quantity]) => ({ location_id, quantity }));

/**
 * POST /api/reservations/{id}/reallocate (API.md section 21, "Reallocation"): the named lines of
 * an active reservation hold their units where the request says from now on, all or nothing; the
 * other lines keep theirs. A destination needs the units available counting the line's own
 * allocations there as released. Rows are locked as a commit locks them, then as a transfer
 * does: the reservation, the locations the lines hold units at or are moved to (key share, id
 * order), the variants (id order), then their levels under the variants' locks; so reallocations,
 * reservations, commits, transfers, adjustments and location changes queue, never deadlock.
 * A location the line already holds units at may keep them (or fewer) though it is inactive:
 * only a new allocation there is refused (409 `location_inactive`). A reallocation that changes
 * nothing writes nothing. The change records `reservation.reallocated` (the contract names no
 * event for it; the reservation's own events are the nearest), with the named lines before and
 * after; the variants' totals do not change, so no `variant.stock_changed`.
 */
export async function reallocateReservation(trx: Transaction<Database>, id: string, input: ReallocationInput, context: EventContext): Promise<Reservation> {
  const variantIds = distinctVariantsOfLines(input.lines.map((line) => line.variant_id));
  const wanted = input.lines.map((line, index) => wantedAllocations(line.allocations, `/lines/${index}`));
  const reservation = await lockReservation(trx, id);
  if (!reservation) throw notFound('reservation');
  const positions = linesOfReservation(reservation, variantIds, wanted);
  if (reservation.status !== 'active' || reservation.lapsed) throw reservationClosed(reservation.status === 'active' ? 'expired' : reservation.status, 'reallocated');
  const current = positions.map((position) => allocatedAt(reservation, position));
  if (wanted.every((allocated, index) => sameAllocations(allocated, current[index]!))) return reservation;

  const sources = current.flatMap((allocated) => [...allocated.keys()]);
  const destinations = wanted.flatMap((allocated) => [...allocated.keys()]);
  const locations = new Map((await shareLocations(trx, [...new Set([...sources, ...destinations])])).map((location) => [location.id, location]));
  const pathsOf = (test: (locationId: string, quantity: number, index: number) => boolean) =>
    wanted.flatMap((allocated, index) => [...allocated].flatMap(([locationId, quantity], at) => (test(locationId, quantity, index) ? [`/lines/${index}/allocations/${at}/location_id`] : [])));
  const unknown = pathsOf((locationId) => !locations.has(locationId));
  if (unknown.length > 0) throw new AppError('not_found', 'A location named in the request does not exist.', unknown.map((path) => ({ path, message: 'names no location' })));
  const inactive = pathsOf((locationId, quantity, index) => locations.get(locationId)!.status !== 'active' && quantity > (current[index]!.get(locationId) ?? 0));
  if (inactive.length > 0) throw new AppError('location_inactive', 'An inactive location takes no new allocation.', inactive.map((path) => ({ path, message: 'names an inactive location' })));

  await lockVariantsInIdOrder(trx, [...new Set(variantIds)].sort(byId));
  const levels = await levelsOfVariants(trx, variantIds);
  const short: FieldProblem[] = [];
  wanted.forEach((allocated, index) => {
    const lacking = [...allocated].flatMap(([locationId, quantity]) => {
      const level = levelAt(levels, variantIds[index]!, locationId);
      const available = level.stock - level.reserved + (current[index]!.get(locationId) ?? 0);
      return available < quantity ? [`${quantity} asked at ${locations.get(locationId)!.code}, ${available} available there counting this line's own units`] : [];
    });
    if (lacking.length > 0) short.push({ path: `/lines/${index}`, message: lacking.join('; ') });
  });
  if (short.length > 0) throw new AppError('insufficient_stock', 'Some lines ask for more than their destinations have available; nothing moved.', short);

  const moves = wanted
    .flatMap((allocated, index) => {
      const before = current[index]!;
      return [...new Set([...before.keys(), ...allocated.keys()])].map((locationId) => ({
        variant_id: variantIds[index]!,
        location_id: locationId,
        delta: (allocated.get(locationId) ?? 0) - (before.get(locationId) ?? 0),
      }));
    })
    .filter((move) => move.delta !== 0)
    .sort((a, b) => byId(a.variant_id, b.variant_id) || byId(a.location_id, b.location_id));
  const written = await moveReserved(trx, moves);
  // Every destination passed its check, so it has a level: a missing one is a bug, not a refusal.
  if (written !== moves.length) throw new Error(`reallocating reservation ${reservation.id}: ${moves.length} levels to write, ${written} written`);
  await moveVersions(trx, [...new Set(moves.map((move) => move.variant_id))].sort(byId));

  const allocations: ReservationAllocationRow[] = wanted.flatMap((allocated, index) =>
    [...allocated].map(([location_id, quantity]) => ({ reservation_id: reservation.id, position: positions[index]!, location_id, quantity })),
  );
  const row = await replaceAllocations(trx, reservation.id, positions, allocations);
  const lines = (allocatedOf: Allocated[]) => allocatedOf.map((allocated, index) => ({ variant_id: variantIds[index]!, allocations: asList(allocated) }));
  await record(
    trx,
    { type: 'reservation.reallocated', subjectType: 'reservation', subjectId: reservation.id, data: { before: { lines: lines(current) }, after: { lines: lines(wanted) }, reference: reservation.reference } },
    context,
  );
  const kept = reservation.allocations.filter((allocation) => !positions.includes(allocation.position));
  return {
    ...row,
    lines: reservation.lines,
    allocations: [...kept, ...allocations].sort((a, b) => a.position - b.position || byId(a.location_id, b.location_id)),
  };
}

/** A line's allocations by location id (lower-cased); a location named twice is a 400 with the second one's path. */
function wantedAllocations(allocations: ReallocationInput['lines'][number]['allocations'], linePath: string): Allocated {
  const allocated: Allocated = new Map();
  allocations.forEach((allocation, at) => {
    const locationId = allocation.location_id.toLowerCase();
    if (allocated.has(locationId)) {
      throw new AppError('validation_failed', 'The request does not match the schema.', [{ path: `${linePath}/allocations/${at}/location_id`, message: 'names a location another allocation of the line names already' }]);
    }
    allocated.set(locationId, allocation.quantity);
  });
  return allocated;
}

/**
 * The positions of the reservation's lines that the request's lines name, in the request's
 * order. A variant that is no line of the reservation, or allocations not summing to its line's
 * quantity, is a 400 `validation_failed` listing every such path.
 */
function linesOfReservation(reservation: Reservation, variantIds: string[], wanted: Allocated[]): number[] {
  const problems: FieldProblem[] = [];
  const positions = variantIds.map((variantId, index) => {
    const line = reservation.lines.find((candidate) => candidate.variant_id === variantId);
    if (!line) {
      problems.push({ path: `/lines/${index}/variant_id`, message: 'names no line of the reservation' });
      return -1;
    }
    const sum = [...wanted[index]!.values()].reduce((total, quantity) => total + quantity, 0);
    if (sum !== line.quantity) problems.push({ path: `/lines/${index}/allocations`, message: `sum to ${sum}; the line holds ${line.quantity}` });
    return line.position;
  });
  if (problems.length > 0) throw new AppError('validation_failed', 'The request does not match the schema.', problems);
  return positions;
}
