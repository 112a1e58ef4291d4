import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { isUniqueViolation } from '../db/errors.js';
import type { Database, VariantRow } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { changedFields, record, type EventContext, type NewEvent } from '../events/event-recorder.js';
import type { EventType } from '../events/event-types.js';
import { AppError } from '../http/errors.js';
import { mergePatch } from '../http/merge-patch.js';
import { lockForWrite } from '../http/preconditions.js';
import { assertValid } from '../http/validation.js';
import {
  deleteVariant,
  findVariantById,
  findVariantByIdForUpdate,
  insertVariant,
  replaceVariant,
  type VariantFields,
} from './variant-repository.js';
import { insertStockMovement } from './stock-movement-repository.js';
import { VariantBody, type BatchOperationInput, type VariantInput, type VariantPatch } from './variant-schemas.js';

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

/** PUT replaces: optional fields left out take their defaults. */
function toFields(input: VariantInput): VariantFields {
  return {
    product_id: input.product_id,
    sku: input.sku,
    name: input.name,
    price: input.price,
    stock: input.stock ?? 0,
    attributes: input.attributes ?? {},
  };
}

const fieldsOf = (row: VariantRow): VariantFields => ({
  product_id: row.product_id,
  sku: row.sku,
  name: row.name,
  price: row.price,
  stock: row.stock,
  attributes: row.attributes,
});

const sameFields = (a: VariantFields, b: VariantFields) => JSON.stringify(a) === JSON.stringify(b);

const variantEvent = (type: EventType, id: string, data: Record<string, unknown>): NewEvent => ({ type, subjectType: 'variant', subjectId: id, data });
const FIELDS = ['product_id', 'sku', 'name', 'price', 'stock', 'attributes'] as const;

/** The movement of a create, PUT, PATCH or batch operation that changed `stock`. */
async function recordStockMovement(trx: Transaction<Database>, variant: VariantRow, delta: number, reason: string, context: EventContext): Promise<void> {
  if (delta === 0) return;
  await insertStockMovement(trx, { variant_id: variant.id, delta, stock_after: variant.stock, reason, reference: null, actor_id: context.actorId });
}

async function createIn(trx: Transaction<Database>, id: string, input: VariantInput, context: EventContext): Promise<VariantRow> {
  // Checked first so a taken id is reported as such even when the SKU collides too; over HTTP this
  // read is the transaction's first statement, and carries the caller check.
  if (await findVariantById(trx, id)) throw variantExists();
  const created = await insertVariant(trx, id, toFields(input));
  await recordStockMovement(trx, created, created.stock, 'variant created', context);
  await record(trx, variantEvent('variant.created', id, { after: fieldsOf(created) }), context);
  return created;
}

async function writeIn(trx: Transaction<Database>, current: VariantRow, fields: VariantFields, context: EventContext): Promise<VariantRow> {
  if (fields.stock < current.reserved) {
    throw new AppError('insufficient_stock', `${current.reserved} units are reserved; stock cannot go below that.`, [{ path: '/stock', message: `must be at least ${current.reserved} (the reserved units)` }]);
  }
  const updated = await replaceVariant(trx, current.id, fields);
  await recordStockMovement(trx, updated, updated.stock - current.stock, 'variant updated', context);
  await record(trx, variantEvent('variant.updated', current.id, changedFields(fieldsOf(current), fieldsOf(updated), [...FIELDS])), context);
  return updated;
}

async function replaceIn(trx: Transaction<Database>, id: string, ifMatch: string | undefined, input: VariantInput, context: EventContext): Promise<VariantRow> {
  const current = await lockForWrite(() => findVariantByIdForUpdate(trx, id), ifMatch, 'variant');
  return writeIn(trx, current, toFields(input), context);
}

async function removeIn(trx: Transaction<Database>, id: string, ifMatch: string | undefined, context: EventContext): Promise<void> {
  const current = await lockForWrite(() => findVariantByIdForUpdate(trx, id), ifMatch, 'variant');
  if (current.reserved > 0) throw new AppError('insufficient_stock', `${current.reserved} units are reserved; release or commit the reservations first.`);
  await deleteVariant(trx, id);
  await record(trx, variantEvent('variant.deleted', id, { before: fieldsOf(current) }), context);
}

/** `id` is the client's choice (POST /api/variants/{id}) or, left out, the service's. */
export function createVariant(db: Kysely<Database>, id: string | undefined, input: VariantInput, context: EventContext): Promise<VariantRow> {
  return translatingConflicts(() => inTransaction(db, (trx) => createIn(trx, id ?? randomUUID(), input, context)));
}

export function updateVariant(db: Kysely<Database>, id: string, ifMatch: string | undefined, input: VariantInput, context: EventContext): Promise<VariantRow> {
  return translatingConflicts(() => inTransaction(db, (trx) => replaceIn(trx, id, ifMatch, input, context)));
}

/** A merge patch, validated as a whole like a PUT; a patch that changes nothing writes nothing. */
export function patchVariant(db: Kysely<Database>, id: string, ifMatch: string | undefined, patch: VariantPatch, context: EventContext): Promise<VariantRow> {
  return translatingConflicts(() =>
    inTransaction(db, async (trx) => {
      const current = await lockForWrite(() => findVariantByIdForUpdate(trx, id), ifMatch, 'variant');
      const merged = mergePatch(fieldsOf(current), patch) as VariantInput;
      assertValid(VariantBody, merged);
      const fields = toFields(merged);
      return sameFields(fields, fieldsOf(current)) ? current : writeIn(trx, current, fields, context);
    }),
  );
}

export function removeVariant(db: Kysely<Database>, id: string, ifMatch: string | undefined, context: EventContext): Promise<void> {
  return inTransaction(db, (trx) => removeIn(trx, id, ifMatch, context));
}

export interface BatchResult {
  op: BatchOperationInput['op'];
  id: string;
  status: 201 | 200 | 204;
  variant?: VariantRow;
}

/**
 * Runs the operations in order in one transaction: the first that fails stops the batch with
 * the status and code its single call would give, pointing at its place in the request, and
 * nothing of the batch is stored.
 */
export function runBatch(db: Kysely<Database>, operations: BatchOperationInput[], context: EventContext): Promise<BatchResult[]> {
  return inTransaction(db, async (trx) => {
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
  });
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
