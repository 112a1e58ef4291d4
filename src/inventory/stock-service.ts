import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { Database, LocationRow, StockLevelRow, VariantRow } from '../db/tables.js';
import { record, recordingSteps, type EventContext, type EventOfRow, type NewEvent } from '../events/event-recorder.js';
import { AppError, validationFailed, type FieldProblem } from '../http/errors.js';
import { lockForWrite } from '../http/preconditions.js';
import { lockVariantsNamedByLines } from './line-variants.js';
import { locationsByPriority } from './location-repository.js';
import { insertStockMovement, insertStockMovements } from './stock-movement-repository.js';
import { defaultLocationId, insertLevels, levelsOfVariants, shareLocations, writeLevelStock } from './stock-level-repository.js';
import { insertVariantsWithStock, lockVariant, takeHeldUnits, writeStock, type StockedVariant } from './stock-repository.js';

export const MAX_STOCK = 1e9;

/** A variant's level at every location, by priority then code, zeros included (GET /api/variants/{id}/stock). */
export { levelsAtEveryLocation } from './stock-level-repository.js';
/** The levels of some variants: an import's batch plans its `stock.<code>` cells against them, an export writes them. */
export { levelsOfVariants } from './stock-level-repository.js';

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

/** A variant's stock at one location, as a write sets it (an import's `stock.<code>` cells). */
export interface LocationStock {
  location_id: string;
  stock: number;
}

/** Every location, by priority then code (an import's `stock.<code>` columns, an export's). */
export const everyLocationByPriority = (db: Kysely<Database>): Promise<LocationRow[]> => locationsByPriority.alone(db, []);

/**
 * Where new variants' opening stock goes: each at the locations it names (share-locked, so none
 * is deleted under the creation), else all of it at the default location. Zero levels write nothing.
 */
async function openingLevels(trx: Transaction<Database>, variants: { id: string; stock: number; levels?: LocationStock[] | undefined }[]): Promise<(LocationStock & { variant_id: string })[]> {
  const named = variants.flatMap((variant) => (variant.levels ?? []).map((level) => ({ id: level.location_id, path: '/stock_by_location' })));
  await namedLocations(trx, named);
  const fallback = variants.some((variant) => variant.levels === undefined && variant.stock !== 0) ? await defaultLocationId(trx) : undefined;
  return variants
    .flatMap((variant) => (variant.levels ?? [{ location_id: fallback!, stock: variant.stock }]).map((level) => ({ variant_id: variant.id, ...level })))
    .filter((level) => level.stock !== 0);
}

/**
 * The opening stock of a variant just created (stock 0), at the default location or at the
 * locations `levels` names (an import's `stock.<code>` cells, their sum being `stock`): its first
 * movements, which belong to the creation's `variant.created` (API.md section 10), so no event
 * of their own.
 */
export async function openStock(trx: Transaction<Database>, variant: VariantRow, stock: number, note: StockNote, levels?: LocationStock[]): Promise<VariantRow> {
  const opening = await openingLevels(trx, [{ id: variant.id, stock, levels }]);
  if (opening.length === 0) return variant;
  for (const level of opening) await writeLevelStock(trx, variant.id, level.location_id, level.stock);
  const opened = await writeStock(trx, variant.id, { stock, moveVersion: false });
  await insertStockMovements(trx, opening.map((level) => ({ ...level, delta: level.stock, stock_after: level.stock, reason: note.reason, reference: note.reference, actor_id: note.context.actorId })));
  return opened;
}

/**
 * Many variants just decided by the variants area (an import's batch), inserted with their
 * opening stock (at the default location, or where `levels` says), and their first movements: a
 * few statements for the whole batch (insertVariantsWithStock says why the stock goes in with the
 * row). Like openStock, no event: each movement belongs to its `variant.created`.
 */
export async function createStockedVariants(trx: Transaction<Database>, variants: (StockedVariant & { levels?: LocationStock[] | undefined })[], note: StockNote): Promise<void> {
  if (variants.length === 0) return;
  await insertVariantsWithStock(trx, variants);
  const opening = await openingLevels(trx, variants);
  await insertLevels(trx, opening);
  await insertStockMovements(trx, opening.map((level) => ({ ...level, delta: level.stock, stock_after: level.stock, reason: note.reason, reference: note.reference, actor_id: note.context.actorId })));
}

/**
 * The closing movements of a locked variant about to be deleted (its levels go with its row):
 * one per location holding stock, or one of delta 0 at the default when none does, so a
 * variant id's stock stays the sum of its movements at each location. They belong to the
 * deletion's `variant.deleted`.
 */
export async function closeStock(trx: Transaction<Database>, variant: VariantRow, note: StockNote): Promise<void> {
  const stocked = (await levelsOfVariants(trx, [variant.id])).filter((level) => level.stock > 0);
  const closing = stocked.length > 0 ? stocked.map((level) => ({ location_id: level.location_id, delta: -level.stock })) : [{ location_id: await defaultLocationId(trx), delta: -variant.stock }];
  await insertStockMovements(
    trx,
    closing.map((close) => ({ variant_id: variant.id, ...close, stock_after: 0, reason: note.reason, reference: note.reference, actor_id: note.context.actorId })),
  );
}

const shortBy = (level: { stock: number; reserved: number }, stockAfter: number) => `would leave ${stockAfter} units with ${level.reserved} reserved (${level.stock} on hand)`;
export const shortAt = (level: { stock: number; reserved: number }, stockAfter: number, code: string) => `${shortBy(level, stockAfter)} at location ${code}`;

/** A `stock` below `reserved` is refused: 409 `insufficient_stock` naming the field. */
export function assertAboveReserved(variant: VariantRow, stockAfter: number, path: string): void {
  if (stockAfter < variant.reserved) {
    throw new AppError('insufficient_stock', `${variant.reserved} units are reserved; stock cannot go below that.`, [{ path, message: `must be at least ${variant.reserved} (the reserved units)` }]);
  }
}

/** A variant's stock and reserved units at one location (zero of both where it has no row). */
export interface Level {
  location_id: string;
  stock: number;
  reserved: number;
}

export const levelAt = (levels: StockLevelRow[], variantId: string, locationId: string): Level =>
  levels.find((level) => level.variant_id === variantId && level.location_id === locationId) ?? { location_id: locationId, stock: 0, reserved: 0 };

/**
 * Moves a locked variant's stock at one location: the level, the variant's kept total, one
 * movement (its `stock_after` the stock there) and one `variant.stock_changed` (its `before` and
 * `after` the variant's total, `location_id` beside the movement). The version moves on unless
 * the change this one is part of moved it already (`moveVersion: false`, a PUT that changed other
 * fields too). The caller checked the bounds.
 */
export async function setLevel(trx: Transaction<Database>, variant: VariantRow, level: Level, levelStockAfter: number, note: StockNote, options: { moveVersion?: boolean } = {}): Promise<VariantRow> {
  const delta = levelStockAfter - level.stock;
  await writeLevelStock(trx, variant.id, level.location_id, levelStockAfter);
  const updated = await writeStock(trx, variant.id, { stock: variant.stock + delta, moveVersion: options.moveVersion ?? true });
  const movement = { delta, stock_after: levelStockAfter, location_id: level.location_id, reason: note.reason, reference: note.reference };
  await insertStockMovement(trx, { variant_id: variant.id, ...movement, actor_id: note.context.actorId });
  await record(trx, { type: 'variant.stock_changed', subjectType: 'variant', subjectId: variant.id, data: { before: { stock: variant.stock }, after: { stock: updated.stock }, ...movement, ...note.data } }, note.context);
  return updated;
}

/**
 * Sets a locked variant's total stock through the variant itself (its POST, PUT, PATCH, batch,
 * an import's `stock` column): the change applies to the one location holding its stock, or
 * the default when none does; with stock at several locations a change of the total is 409
 * `stock_at_several_locations` (which one should move?). The caller checked `reserved`.
 */
export async function setStock(
  trx: Transaction<Database>,
  variant: VariantRow,
  stockAfter: number,
  note: StockNote,
  options: { moveVersion?: boolean } = {},
): Promise<VariantRow> {
  const stocked = (await levelsOfVariants(trx, [variant.id])).filter((level) => level.stock > 0);
  if (stocked.length > 1 && stockAfter !== variant.stock) {
    throw new AppError('stock_at_several_locations', `The variant's stock is at ${stocked.length} locations; change it at one of them (PUT /api/variants/{id}/stock with location_id, or a transfer).`, [
      { path: '/stock', message: 'the stock is at several locations' },
    ]);
  }
  const level = stocked[0] ?? { location_id: await defaultLocationId(trx), stock: 0, reserved: 0 };
  return setLevel(trx, variant, level, level.stock + stockAfter - variant.stock, note, options);
}

const unknownLocations = (paths: string[]) =>
  new AppError(
    'not_found',
    'A location named in the request does not exist.',
    paths.map((path) => ({ path, message: 'names no location' })),
  );

/**
 * Share-locks the locations a change is about to set stock at, before its variants are locked:
 * every writer of stock takes the locations first (a location's change of status locks the
 * location, then its variants), so taking them in the other order could deadlock. Unknown ids
 * are passed over: the change itself refuses them.
 */
export async function holdLocationsForChange(trx: Transaction<Database>, ids: string[]): Promise<void> {
  if (ids.length > 0) await shareLocations(trx, [...new Set(ids)]);
}

/**
 * The locations the request names, share-locked (locations.ts may not delete them or change
 * their status until this commits), by id; an unknown one is 404 with each path naming it.
 */
export async function namedLocations(trx: Transaction<Database>, named: { id: string; path: string }[]): Promise<Map<string, LocationRow>> {
  const ids = [...new Set(named.map((name) => name.id))];
  const found = new Map((await shareLocations(trx, ids)).map((location) => [location.id, location]));
  const missing = named.filter((name) => !found.has(name.id)).map((name) => name.path);
  if (missing.length > 0) throw unknownLocations(missing);
  return found;
}

/** PUT /api/variants/{id}/stock: a delta or a new level at one location (default: the default one), never below what is reserved there. */
export async function changeStock(
  trx: Transaction<Database>,
  variantId: string,
  ifMatch: string | undefined,
  change: ({ delta: number } | { stock: number }) & { location_id?: string | undefined },
  note: StockNote,
): Promise<VariantRow> {
  const locationId = change.location_id?.toLowerCase() ?? (await defaultLocationId(trx));
  const location = (await namedLocations(trx, [{ id: locationId, path: '/location_id' }])).get(locationId)!;
  const variant = await lockForWrite(() => lockVariant(trx, variantId), ifMatch, 'variant');
  const level = levelAt(await levelsOfVariants(trx, [variant.id]), variant.id, locationId);
  const stockAfter = 'delta' in change ? level.stock + change.delta : change.stock;
  const path = 'delta' in change ? '/delta' : '/stock';
  if (stockAfter > MAX_STOCK || variant.stock + stockAfter - level.stock > MAX_STOCK) throw validationFailed(path, `would take the stock above ${MAX_STOCK}`);
  if (stockAfter < level.reserved) throw new AppError('insufficient_stock', `The stock ${shortAt(level, stockAfter, location.code)}.`, [{ path, message: shortAt(level, stockAfter, location.code) }]);
  return setLevel(trx, variant, level, stockAfter, note);
}

/**
 * Sets a locked variant's stock at several locations at once (an import's `stock.<code>` cells):
 * each level that differs moves as PUT /api/variants/{id}/stock with `location_id` moves it
 * (setLevel: its level, movement and `variant.stock_changed`), the locations share-locked first.
 * Every level and the total are checked before any moves; the falls go first, so the total on
 * the way never passes the larger of where it starts and where it ends. The version moves on
 * once, with the first change, unless the caller's change moved it already.
 */
export async function setLevels(trx: Transaction<Database>, variant: VariantRow, targets: LocationStock[], note: StockNote, options: { moveVersion?: boolean } = {}): Promise<VariantRow> {
  const locations = await namedLocations(trx, targets.map((target) => ({ id: target.location_id, path: '/stock_by_location' })));
  const levels = await levelsOfVariants(trx, [variant.id]);
  const moves = targets
    .map((target) => ({ target, level: levelAt(levels, variant.id, target.location_id), code: locations.get(target.location_id)!.code }))
    .filter(({ target, level }) => target.stock !== level.stock);
  const total = moves.reduce((sum, { target, level }) => sum + target.stock - level.stock, variant.stock);
  for (const { target, level, code } of moves) {
    const path = `/stock_by_location/${code}`;
    if (target.stock > MAX_STOCK || total > MAX_STOCK) throw validationFailed(path, `would take the stock above ${MAX_STOCK}`);
    if (target.stock < level.reserved) throw new AppError('insufficient_stock', `The stock ${shortAt(level, target.stock, code)}.`, [{ path, message: shortAt(level, target.stock, code) }]);
  }
  let written = variant;
  let moveVersion = options.moveVersion ?? true;
  for (const { target, level } of moves.sort((a, b) => a.target.stock - a.level.stock - (b.target.stock - b.level.stock))) {
    written = await setLevel(trx, written, level, target.stock, note, { moveVersion });
    moveVersion = false;
  }
  return written;
}

/** A line of an adjustment: a variant's stock moved at one location. */
export interface AdjustmentLine {
  variant_id: string;
  delta: number;
  location_id?: string | undefined;
}

/**
 * POST /api/stock-adjustments: every line or none, each pair of variant and location at most
 * once. The locations are share-locked, then the variants locked in id order, so two
 * adjustments or transfers over the same variants, with their lines in any order, queue
 * instead of deadlocking; every line that falls short is reported.
 */
export async function adjustStock(trx: Transaction<Database>, lines: AdjustmentLine[], note: StockNote): Promise<VariantRow[]> {
  const fallback = lines.some((line) => line.location_id === undefined) ? await defaultLocationId(trx) : undefined;
  const located = lines.map((line) => ({ ...line, variant_id: line.variant_id.toLowerCase(), location_id: line.location_id?.toLowerCase() ?? fallback! }));
  const pairs = located.map((line) => `${line.variant_id} ${line.location_id}`);
  const repeated = pairs.findIndex((pair, index) => pairs.indexOf(pair) !== index);
  if (repeated !== -1) throw validationFailed(`/lines/${repeated}`, 'names a variant and location another line names already');
  const locations = await namedLocations(trx, located.map((line, index) => ({ id: line.location_id, path: `/lines/${index}/location_id` })));
  const variants = await lockVariantsNamedByLines(trx, located.map((line) => line.variant_id));
  const levels = await levelsOfVariants(trx, [...new Set(located.map((line) => line.variant_id))]);
  const short: FieldProblem[] = [];
  const tooMuch: FieldProblem[] = [];
  const totals = new Map(variants.map((variant) => [variant.id, variant.stock]));
  located.forEach((line, index) => {
    const level = levelAt(levels, line.variant_id, line.location_id);
    const stockAfter = level.stock + line.delta;
    totals.set(line.variant_id, totals.get(line.variant_id)! + line.delta);
    const code = locations.get(line.location_id)!.code;
    if (stockAfter < level.reserved) short.push({ path: `/lines/${index}`, message: shortAt(level, stockAfter, code) });
    if (stockAfter > MAX_STOCK || totals.get(line.variant_id)! > MAX_STOCK) tooMuch.push({ path: `/lines/${index}/delta`, message: `would take the stock above ${MAX_STOCK}` });
  });
  if (tooMuch.length > 0) throw new AppError('validation_failed', 'The request does not match the schema.', tooMuch);
  if (short.length > 0) throw new AppError('insufficient_stock', 'Some lines would take the stock below what is reserved; nothing changed.', short);
  const current = new Map(variants.map((variant) => [variant.id, variant]));
  const results: VariantRow[] = [];
  for (const line of located) {
    const variant = current.get(line.variant_id)!;
    const level = levelAt(levels, line.variant_id, line.location_id);
    const updated = await setLevel(trx, variant, level, level.stock + line.delta, note);
    current.set(variant.id, updated);
    results.push(updated);
  }
  // A variant on several lines is answered as the last of them left it.
  return results.map((variant) => current.get(variant.id)!);
}

/**
 * A commit's units held at a location leave the stock and `reserved` in one update with its movement, which takes
 * the variant's lock; its `variant.stock_changed` and `events`, the commit's own, are recorded by
 * the same statement, so the lock is held for it and the commit only. `alongside`: the steps of
 * the commit's other writes, and the step whose rows the statement answers (takeHeldUnits);
 * `events.ofRows`: the commit's events made of those steps' rows. `db` is the transaction, or the
 * database for a commit in one statement (reservation-service.ts).
 */
export async function commitHeldUnits<Answer = VariantRow>(
  db: Kysely<Database>,
  variantId: string,
  locationId: string,
  quantity: number,
  note: Omit<StockNote, 'data'>,
  events: { given: NewEvent[]; ofRows?: EventOfRow[] },
  alongside?: { steps: RawBuilder<unknown>; answer: string; required?: boolean },
): Promise<Answer[]> {
  const movement = { reason: note.reason, reference: note.reference, actor_id: note.context.actorId };
  const recordedWith = (updatedStep: string) => recordingSteps(events.given, [...(events.ofRows ?? []), committedStockChange(updatedStep, quantity, note)], note.context);
  return takeHeldUnits<Answer>(db, variantId, locationId, quantity, movement, recordedWith, alongside);
}

/**
 * A commit's `variant.stock_changed`: `before` and `after` of the variant's `stock` and
 * `reserved`, then the movement's figures (its location and the stock left there), as setLevel
 * gives a change of stock; built in SQL from the row as
 * the commit's update left it (`updatedStep`), which only that update knows under the lock.
 */
function committedStockChange(updatedStep: string, quantity: number, note: Omit<StockNote, 'data'>): EventOfRow {
  const column = (name: 'id' | 'stock' | 'reserved' | 'location_id' | 'level_stock') => sql.ref(`${updatedStep}.${name}`);
  return {
    type: 'variant.stock_changed',
    subjectType: 'variant',
    step: updatedStep,
    subjectId: column('id'),
    data: sql`jsonb_build_object(
      'before', jsonb_build_object('stock', ${column('stock')} + ${quantity}::integer, 'reserved', ${column('reserved')} + ${quantity}::integer),
      'after', jsonb_build_object('stock', ${column('stock')}, 'reserved', ${column('reserved')}),
      'delta', ${-quantity}::integer, 'stock_after', ${column('level_stock')}, 'location_id', ${column('location_id')}, 'reason', ${note.reason}::text, 'reference', ${note.reference}::text)`,
  };
}

