import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../db/errors.js';
import type { Database, VariantRow } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { AppError } from '../http/errors.js';
import { lockForWrite } from '../http/preconditions.js';
import {
  deleteVariant,
  findVariantById,
  findVariantByIdForUpdate,
  insertVariant,
  replaceVariant,
  type VariantFields,
} from './variant-repository.js';
import type { VariantInput } from './variant-schemas.js';

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

export async function createVariant(db: Kysely<Database>, id: string, input: VariantInput): Promise<VariantRow> {
  // Checked first so a taken id is reported as such even when the SKU collides too.
  if (await findVariantById(db, id)) throw variantExists();
  try {
    return await insertVariant(db, id, toFields(input));
  } catch (error) {
    throw translateConflict(error);
  }
}

export async function updateVariant(
  db: Kysely<Database>,
  id: string,
  ifMatch: string | undefined,
  input: VariantInput,
): Promise<VariantRow> {
  try {
    return await inTransaction(db, async (trx) => {
      await lockForWrite(() => findVariantByIdForUpdate(trx, id), ifMatch, 'variant');
      return replaceVariant(trx, id, toFields(input));
    });
  } catch (error) {
    throw translateConflict(error);
  }
}

export async function removeVariant(db: Kysely<Database>, id: string, ifMatch: string | undefined): Promise<void> {
  await inTransaction(db, async (trx) => {
    await lockForWrite(() => findVariantByIdForUpdate(trx, id), ifMatch, 'variant');
    await deleteVariant(trx, id);
  });
}
