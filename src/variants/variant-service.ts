import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import { isUniqueViolation } from '../db/errors.js';
import type { Database, VariantRow } from '../db/tables.js';
import { changedFields, record, recordMany, type EventContext, type NewEvent } from '../events/event-recorder.js';
import type { EventType } from '../events/event-types.js';
import { AppError } from '../http/errors.js';
import { mergePatch } from '../http/merge-patch.js';
import { lockForWrite } from '../http/preconditions.js';
import { assertValid } from '../http/validation.js';
import { assertAboveReserved, closeStock, createStockedVariants, openStock, setLevels, setStock, type LocationStock } from '../inventory/stock-service.js';
import { deleteVariant, findVariantById, findVariantByIdForUpdate, insertVariant, replaceVariantFields, type VariantFields } from './variant-repository.js';
import { VariantBody, type BatchOperationInput, type VariantInput, type VariantPatch } from './variant-schemas.js';

/** The reads an import's batch and an export make of the variants (imports). */
export { attributeKeysOf, existingVariantIds, lockVariantsBySku, variantsOldestFirstPage, variantsWithAttributes, type VariantFilter } from './variant-repository.js';

const variantExists = () => new AppError('variant_exists', 'A variant with this id already exists.');

/** The database's unique indexes are the rule; this only names the one that fired. */
function translateConflict(error: unknown): unknown {
  if (isUniqueViolation(error, 'variants_pkey')) return variantExists();
  if (isUniqueViolation(error, 'variants_sku_unique')) return new AppError('sku_taken', 'Another variant has this SKU.');
  if (isUniqueViolation(error, 'variants_attributes_unique')) {
    return new AppError('duplicate_attributes', 'Another variant of this product has the same attributes.');
  }
  return error;
}

async function translatingConflicts<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw translateConflict(error);
  }
}

/** A variant as a client sends it: its own fields, and the stock inventory keeps. */
interface VariantChange {
  fields: VariantFields;
  stock: number;
  /** The stock at the locations named (an import's `stock.<code>` cells), `stock` being the total they leave; else `stock` goes where setStock says. */
  levels?: LocationStock[] | undefined;
}

/** PUT replaces: optional fields left out take their defaults. */
function toChange(input: VariantInput): VariantChange {
  return {
    fields: { product_id: input.product_id, sku: input.sku, name: input.name, price: input.price, attributes: input.attributes ?? {} },
    stock: input.stock ?? 0,
  };
}

const fieldsOf = (row: VariantRow): VariantFields => ({ product_id: row.product_id, sku: row.sku, name: row.name, price: row.price, attributes: row.attributes });
const FIELDS = ['product_id', 'sku', 'name', 'price', 'attributes'] as const;
const sameFields = (a: VariantFields, b: VariantFields) => JSON.stringify(a) === JSON.stringify(b);

const variantEvent = (type: EventType, id: string, data: Record<string, unknown>): NewEvent => ({ type, subjectType: 'variant', subjectId: id, data });

async function createIn(trx: Transaction<Database>, id: string, input: VariantInput, context: EventContext): Promise<VariantRow> {
  // Checked first so a taken id is reported as such even when the SKU collides too.
  if (await findVariantById(trx, id)) throw variantExists();
  const change = toChange(input);
  const inserted = await translatingConflicts(() => insertVariant(trx, id, change.fields));
  // The opening movement belongs to this creation's event.
  const created = await openStock(trx, inserted, change.stock, { reason: 'variant created', reference: null, context });
  await record(trx, variantEvent('variant.created', id, { after: { ...fieldsOf(created), stock: created.stock } }), context);
  return created;
}

/**
 * Writes a variant's new state: its own fields (`variant.updated`, only when one changed) and
 * its stock through inventory (`variant.stock_changed`, only when it changed), one version step
 * for the whole write.
 */
async function writeIn(trx: Transaction<Database>, current: VariantRow, change: VariantChange, context: EventContext, origin: ChangeOrigin = BY_REQUEST): Promise<VariantRow> {
  assertAboveReserved(current, change.stock, '/stock');
  let written = current;
  const fieldsChanged = !sameFields(change.fields, fieldsOf(current));
  if (fieldsChanged) {
    written = await translatingConflicts(() => replaceVariantFields(trx, current.id, change.fields));
    await record(trx, variantEvent('variant.updated', current.id, { ...changedFields(fieldsOf(current), fieldsOf(written), [...FIELDS]), ...origin.data }), context);
  }
  const note = { reason: origin.updateReason, reference: null, context, ...(origin.data ? { data: origin.data } : {}) };
  if (change.levels !== undefined) {
    written = await setLevels(trx, written, change.levels, note, { moveVersion: !fieldsChanged });
  } else if (change.stock !== current.stock) {
    written = await setStock(trx, written, change.stock, note, { moveVersion: !fieldsChanged });
  }
  return written;
}

/** Where a change comes from: a request's (the default), or an import's, whose movements and events name it. */
export interface ChangeOrigin {
  createReason: string;
  updateReason: string;
  /** Added to each event's `data` (`import_id`). */
  data?: Record<string, unknown>;
}

const BY_REQUEST: ChangeOrigin = { createReason: 'variant created', updateReason: 'variant updated' };

/** A variant's fields and stock as a write sets them (an import row worked out against the stored variant). */
export interface VariantState {
  fields: VariantFields;
  stock: number;
  /** The stock at each location the row names (its `stock.<code>` cells); `stock` is then the total they leave. */
  levels?: LocationStock[] | undefined;
}

/**
 * An import's update of one locked variant: its fields and stock as `writeIn` writes them, with
 * the import's reason and id on its movement and events.
 */
export function writeImportedChange(trx: Transaction<Database>, current: VariantRow, next: VariantState, context: EventContext, origin: ChangeOrigin): Promise<VariantRow> {
  return writeIn(trx, current, next, context, origin);
}

/** An import's creation of one variant, as POST's, with the import's reason and id. */
export async function createImported(trx: Transaction<Database>, id: string, next: VariantState, context: EventContext, origin: ChangeOrigin): Promise<VariantRow> {
  if (await findVariantById(trx, id)) throw variantExists();
  const inserted = await translatingConflicts(() => insertVariant(trx, id, next.fields));
  const created = await openStock(trx, inserted, next.stock, { reason: origin.createReason, reference: null, context }, next.levels);
  await record(trx, variantEvent('variant.created', id, { after: { ...fieldsOf(created), stock: created.stock }, ...origin.data }), context);
  return created;
}

/**
 * Many creations at once (an import's batch whose rows were checked against the stored variants
 * and each other): the same rows, movements and `variant.created` events as createImported, in a
 * few statements. A conflict the checks could not see (another writer's SKU) raises the unique
 * violation; the caller then creates the rows one by one.
 */
export async function createManyImported(trx: Transaction<Database>, variants: (VariantState & { id: string })[], context: EventContext, origin: ChangeOrigin): Promise<void> {
  if (variants.length === 0) return;
  // Inventory inserts the rows: their opening stock and its movements are its own to write (one owner per table).
  await createStockedVariants(trx, variants.map((variant) => ({ id: variant.id, ...variant.fields, stock: variant.stock, levels: variant.levels })), { reason: origin.createReason, reference: null, context });
  await recordMany(
    trx,
    variants.map((variant) => variantEvent('variant.created', variant.id, { after: { ...variant.fields, stock: variant.stock }, ...origin.data })),
    context,
  );
}

/** The fields a variant row holds, for comparing with what an import row asks. */
export const variantStateOf = (row: VariantRow): VariantState => ({ fields: fieldsOf(row), stock: row.stock });
export const sameVariantState = (a: VariantState, b: VariantState) => a.stock === b.stock && sameFields(a.fields, b.fields);
export { translateConflict };

async function replaceIn(trx: Transaction<Database>, id: string, ifMatch: string | undefined, input: VariantInput, context: EventContext): Promise<VariantRow> {
  const current = await lockForWrite(() => findVariantByIdForUpdate(trx, id), ifMatch, 'variant');
  const change = toChange(input);
  // A PUT that repeats the variant as it is still writes: its version moves, as every PUT's does.
  if (sameFields(change.fields, fieldsOf(current)) && change.stock === current.stock) return translatingConflicts(() => replaceVariantFields(trx, id, change.fields));
  return writeIn(trx, current, change, context);
}

async function removeIn(trx: Transaction<Database>, id: string, ifMatch: string | undefined, context: EventContext): Promise<void> {
  const current = await lockForWrite(() => findVariantByIdForUpdate(trx, id), ifMatch, 'variant');
  if (current.reserved > 0) throw new AppError('insufficient_stock', `${current.reserved} units are reserved; release or commit the reservations first.`);
  // The closing movement: a variant id's stock stays the sum of its movements, across re-creations.
  await closeStock(trx, current, { reason: 'variant deleted', reference: null, context });
  await deleteVariant(trx, id);
  await record(trx, variantEvent('variant.deleted', id, { before: { ...fieldsOf(current), stock: current.stock } }), context);
}

/** `id` is the client's choice (POST /api/variants/{id}) or, left out, the service's. */
export function createVariant(trx: Transaction<Database>, id: string | undefined, input: VariantInput, context: EventContext): Promise<VariantRow> {
  return createIn(trx, id ?? randomUUID(), input, context);
}

export function updateVariant(trx: Transaction<Database>, id: string, ifMatch: string | undefined, input: VariantInput, context: EventContext): Promise<VariantRow> {
  return replaceIn(trx, id, ifMatch, input, context);
}

/** A merge patch, validated as a whole like a PUT; a patch that changes nothing writes nothing. */
export async function patchVariant(trx: Transaction<Database>, id: string, ifMatch: string | undefined, patch: VariantPatch, context: EventContext): Promise<VariantRow> {
  const current = await lockForWrite(() => findVariantByIdForUpdate(trx, id), ifMatch, 'variant');
  const merged = mergePatch({ ...fieldsOf(current), stock: current.stock }, patch) as VariantInput;
  assertValid(VariantBody, merged);
  const change = toChange(merged);
  if (sameFields(change.fields, fieldsOf(current)) && change.stock === current.stock) return current;
  return writeIn(trx, current, change, context);
}

export function removeVariant(trx: Transaction<Database>, id: string, ifMatch: string | undefined, context: EventContext): Promise<void> {
  return removeIn(trx, id, ifMatch, context);
}

export interface BatchResult {
  op: BatchOperationInput['op'];
  id: string;
  status: 201 | 200 | 204;
  variant?: VariantRow;
}

/**
 * Runs the operations in order in the caller's transaction: the first that fails stops the batch
 * with the status and code its single call would give, pointing at its place in the request, and
 * nothing of the batch is stored.
 */
export async function runBatch(trx: Transaction<Database>, operations: BatchOperationInput[], context: EventContext): Promise<BatchResult[]> {
  const results: BatchResult[] = [];
  for (const [index, operation] of operations.entries()) {
    try {
      results.push(await runOperation(trx, operation, context));
    } catch (error) {
      const refusal = translateConflict(error);
      if (!(refusal instanceof AppError)) throw refusal;
      throw new AppError(refusal.code, `Operation ${index} failed: ${refusal.detail}`, [{ path: `/operations/${index}`, message: refusal.detail }]);
    }
  }
  return results;
}

async function runOperation(trx: Transaction<Database>, operation: BatchOperationInput, context: EventContext): Promise<BatchResult> {
  switch (operation.op) {
    case 'create': {
      const variant = await createIn(trx, operation.id?.toLowerCase() ?? randomUUID(), operation.variant, context);
      return { op: 'create', id: variant.id, status: 201, variant };
    }
    case 'update': {
      const variant = await replaceIn(trx, operation.id.toLowerCase(), operation.if_match, operation.variant, context);
      return { op: 'update', id: variant.id, status: 200, variant };
    }
    case 'delete': {
      const id = operation.id.toLowerCase();
      await removeIn(trx, id, operation.if_match, context);
      return { op: 'delete', id, status: 204 };
    }
  }
}
