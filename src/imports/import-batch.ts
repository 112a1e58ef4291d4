import { randomUUID } from 'node:crypto';
import { sql, type Transaction } from 'kysely';
import type { Database, StockLevelRow, VariantRow } from '../db/tables.js';
import type { EventContext } from '../events/event-recorder.js';
import { AppError } from '../http/errors.js';
import { assertValid } from '../http/validation.js';
import { holdLocationsForChange, levelAt, levelsOfVariants, shortAt, type LocationStock } from '../inventory/stock-service.js';
import { VariantBody } from '../variants/variant-schemas.js';
import {
  createImported,
  createManyImported,
  existingVariantIds,
  lockVariantsBySku,
  sameVariantState,
  translateConflict,
  variantStateOf,
  variantsWithAttributes,
  writeImportedChange,
  type ChangeOrigin,
  type VariantState,
} from '../variants/variant-service.js';
import type { ReadRow, RowRequest } from './import-rows.js';

export type RowOutcome = 'created' | 'updated' | 'unchanged' | { failed: string };

export interface BatchSettings {
  mode: 'upsert' | 'create';
  context: EventContext;
  origin: ChangeOrigin;
}

type Plan = { kind: 'create'; id: string; next: VariantState } | { kind: 'update'; current: VariantRow; next: VariantState };

const failed = (message: string): { failed: string } => ({ failed: message });

/**
 * PostgreSQL's data exceptions (SQLSTATE class 22: a character or a number it cannot store). The
 * rows are checked before they are written, so none should come; if one does, it fails its row
 * with a message of our own, never the import and never with the database's words.
 */
const isDataException = (error: unknown) => /^22/.test(String((error as { code?: unknown } | undefined)?.code ?? ''));
const UNSTORABLE = 'a value of this row cannot be stored';

/** The message of a refusal, as a row's error: `code: detail` or the first field problem. */
function messageOf(error: AppError): string {
  const problem = error.errors?.[0];
  if (error.code === 'validation_failed' && problem) return `${problem.path.replace(/^\//, '') || 'row'} ${problem.message}`;
  return `${error.code}: ${error.detail}`;
}

/** The whole variant a row would leave, checked by the rules of POST and PUT (section 5). */
function checked(next: VariantState): string | undefined {
  try {
    assertValid(VariantBody, { ...next.fields, stock: next.stock });
    return undefined;
  } catch (error) {
    if (error instanceof AppError) return messageOf(error);
    throw error;
  }
}

/**
 * What a row's `stock.<code>` cells leave (API.md section 21): the variant's new total (the
 * locations it does not name keep their stock), and the levels that change; a `stock` cell beside
 * them must be that total. Each named location keeps at least what is reserved there.
 */
function plannedLevels(request: RowRequest, variantId: string, stock: number, levels: StockLevelRow[]): { stock: number; levels: LocationStock[] } | { failed: string } {
  const stockAt = request.stockAt ?? [];
  let total = stock;
  const changing: LocationStock[] = [];
  for (const named of stockAt) {
    const level = levelAt(levels, variantId, named.location_id);
    if (named.stock < level.reserved) return failed(`insufficient_stock: stock.${named.code} ${shortAt(level, named.stock, named.code)}`);
    total += named.stock - level.stock;
    if (named.stock !== level.stock) changing.push({ location_id: named.location_id, stock: named.stock });
  }
  if (request.stock !== undefined && request.stock !== total) return failed(`stock (${request.stock}) is not the total the stock of each location gives (${total}): leave it empty or make it that total`);
  return { stock: total, levels: changing };
}

function planUpdate(request: RowRequest, current: VariantRow, levels: StockLevelRow[], mode: BatchSettings['mode']): Plan | RowOutcome {
  if (mode === 'create') return failed('sku_taken: a variant with this SKU exists (mode=create creates only)');
  if (request.id !== undefined && request.id !== current.id) return failed(`id does not match the variant with this SKU (${current.id})`);
  const perLocation = request.stockAt ? plannedLevels(request, current.id, current.stock, levels) : undefined;
  if (perLocation !== undefined && 'failed' in perLocation) return perLocation;
  const attributes: Record<string, string> = request.clearAttributes ? {} : { ...current.attributes };
  for (const [key, value] of Object.entries(request.attributes)) {
    if (value === null) delete attributes[key];
    else attributes[key] = value;
  }
  const next: VariantState = {
    fields: { product_id: request.product_id ?? current.product_id, sku: current.sku, name: request.name ?? current.name, price: request.price ?? current.price, attributes },
    stock: perLocation?.stock ?? request.stock ?? current.stock,
    levels: perLocation?.levels,
  };
  const problem = checked(next);
  if (problem) return failed(problem);
  if (next.stock < current.reserved) return failed(`insufficient_stock: ${current.reserved} units are reserved; stock cannot go below that`);
  if (sameVariantState(next, variantStateOf(current)) && (next.levels ?? []).length === 0) return 'unchanged';
  return { kind: 'update', current, next };
}

function planCreate(request: RowRequest, takenIds: Set<string>): Plan | RowOutcome {
  const missing = (['product_id', 'name', 'price'] as const).filter((field) => request[field] === undefined);
  if (missing.length > 0) return failed(`${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} required for a new variant`);
  const id = request.id ?? randomUUID();
  if (takenIds.has(id)) return failed('variant_exists: a variant with this id already exists');
  const perLocation = request.stockAt ? plannedLevels(request, id, 0, []) : undefined;
  if (perLocation !== undefined && 'failed' in perLocation) return perLocation;
  const attributes = Object.fromEntries(Object.entries(request.attributes).filter((entry): entry is [string, string] => entry[1] !== null));
  const next: VariantState = {
    fields: { product_id: request.product_id!, sku: request.sku, name: request.name!, price: request.price!, attributes },
    stock: perLocation?.stock ?? request.stock ?? 0,
    levels: perLocation?.levels,
  };
  const problem = checked(next);
  return problem ? failed(problem) : { kind: 'create', id, next };
}

const attributeKey = (state: VariantState) => `${state.fields.product_id}\n${JSON.stringify(Object.entries(state.fields.attributes).sort(([a], [b]) => (a < b ? -1 : 1)))}`;

/** Two variants of one product may not have equal attributes: against the stored variants and the batch's own rows. */
async function refuseDuplicateAttributes(trx: Transaction<Database>, plans: (Plan | RowOutcome)[]): Promise<void> {
  const moving = plans
    .map((plan, index) => ({ plan, index }))
    .filter((item): item is { plan: Plan; index: number } => typeof item.plan === 'object' && 'kind' in item.plan)
    .filter(({ plan }) => plan.kind === 'create' || attributeKey(plan.next) !== attributeKey(variantStateOf(plan.current)));
  const holders = await variantsWithAttributes(trx, moving.map(({ plan }) => ({ productId: plan.next.fields.product_id, attributes: plan.next.fields.attributes })));
  const inBatch = new Set<string>();
  moving.forEach(({ plan, index }, position) => {
    const key = attributeKey(plan.next);
    const holder = holders.get(position);
    const self = plan.kind === 'create' ? plan.id : plan.current.id;
    if ((holder !== undefined && holder !== self) || inBatch.has(key)) {
      plans[index] = failed('duplicate_attributes: another variant of this product has the same attributes');
    } else {
      inBatch.add(key);
    }
  });
}

async function applyPlan(trx: Transaction<Database>, plan: Plan, settings: BatchSettings): Promise<RowOutcome> {
  if (plan.kind === 'create') {
    await createImported(trx, plan.id, plan.next, settings.context, settings.origin);
    return 'created';
  }
  await writeImportedChange(trx, plan.current, plan.next, settings.context, settings.origin);
  return 'updated';
}

/** One row under its own savepoint: a refusal fails the row and undoes only it. */
async function applyAlone(trx: Transaction<Database>, plan: Plan, settings: BatchSettings): Promise<RowOutcome> {
  await sql`savepoint import_row`.execute(trx);
  try {
    const outcome = await applyPlan(trx, plan, settings);
    await sql`release savepoint import_row`.execute(trx);
    return outcome;
  } catch (error) {
    const refusal = translateConflict(error);
    if (!(refusal instanceof AppError) && !isDataException(error)) throw error;
    await sql`rollback to savepoint import_row`.execute(trx);
    return failed(refusal instanceof AppError ? messageOf(refusal) : UNSTORABLE);
  }
}

/**
 * Applies a batch of rows (each SKU once) in the caller's transaction and says what became of
 * each: the stored variants they match are locked and read in one statement, every row is
 * worked out and checked against them and the batch, then the creations are written together
 * (createManyImported) and the updates one by one. When a write meets a conflict the checks could
 * not foresee (another writer's SKU, a value the database refuses), the batch is undone to its
 * savepoint and each row is applied alone, so only the rows at fault fail.
 */
export async function applyBatch(trx: Transaction<Database>, rows: ReadRow[], settings: BatchSettings): Promise<RowOutcome[]> {
  const requests = rows.map((row) => ('request' in row ? row.request : undefined));
  await holdLocationsForChange(trx, requests.flatMap((request) => request?.stockAt?.map((named) => named.location_id) ?? []));
  const stored = await lockVariantsBySku(trx, [...new Set(requests.flatMap((request) => (request ? [request.sku.toLowerCase()] : [])))]);
  const bySku = new Map(stored.map((variant) => [variant.sku.toLowerCase(), variant]));
  const levels = requests.some((request) => request?.stockAt) ? await levelsOfVariants(trx, stored.map((variant) => variant.id)) : [];
  const chosenIds = requests.flatMap((request) => (request?.id !== undefined && !bySku.has(request.sku.toLowerCase()) ? [request.id] : []));
  const takenIds = await existingVariantIds(trx, chosenIds);
  const plans: (Plan | RowOutcome)[] = rows.map((row, index) => {
    const request = requests[index];
    if (!request) return failed((row as { problem: string }).problem);
    const current = bySku.get(request.sku.toLowerCase());
    return current ? planUpdate(request, current, levels, settings.mode) : planCreate(request, takenIds);
  });
  await refuseDuplicateAttributes(trx, plans);
  const isPlan = (plan: Plan | RowOutcome): plan is Plan => typeof plan === 'object' && 'kind' in plan;

  await sql`savepoint import_batch`.execute(trx);
  try {
    const creates = plans.filter(isPlan).filter((plan): plan is Extract<Plan, { kind: 'create' }> => plan.kind === 'create');
    await createManyImported(trx, creates.map((plan) => ({ id: plan.id, ...plan.next })), settings.context, settings.origin);
    for (const plan of plans.filter(isPlan)) if (plan.kind === 'update') await applyPlan(trx, plan, settings);
    await sql`release savepoint import_batch`.execute(trx);
    return plans.map((plan) => (isPlan(plan) ? (plan.kind === 'create' ? 'created' : 'updated') : plan));
  } catch (error) {
    if (!(translateConflict(error) instanceof AppError) && !isDataException(error)) throw error;
    await sql`rollback to savepoint import_batch`.execute(trx);
  }
  const outcomes: RowOutcome[] = [];
  for (const plan of plans) outcomes.push(isPlan(plan) ? await applyAlone(trx, plan, settings) : plan);
  return outcomes;
}
