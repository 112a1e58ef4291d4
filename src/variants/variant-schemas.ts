import { Type, type Static } from '@sinclair/typebox';
import { Timestamp } from '../http/common-schemas.js';

const PRODUCT_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$';
const SKU_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';

const ProductId = Type.String({
  pattern: PRODUCT_ID_PATTERN,
  description: '1 to 64 characters of [A-Za-z0-9._:-], starting with a letter or digit.',
});
const Sku = Type.String({
  pattern: SKU_PATTERN,
  description: '1 to 64 characters of [A-Za-z0-9._-], starting with a letter or digit; unique without regard to case.',
});
const Attributes = Type.Record(Type.String(), Type.String({ maxLength: 200 }), {
  maxProperties: 20,
  propertyNames: { minLength: 1, maxLength: 50 },
  description: 'Up to 20 keys (1..50 characters) to strings (up to 200). Two variants of one product may not have equal attributes.',
});

export const VariantBody = Type.Object(
  {
    product_id: ProductId,
    sku: Sku,
    name: Type.String({ minLength: 1, maxLength: 200 }),
    price: Type.Integer({ minimum: 0, maximum: 1e12, description: 'Minor units (cents).' }),
    stock: Type.Optional(Type.Integer({ minimum: 0, maximum: 1e9, description: 'Defaults to 0.' })),
    attributes: Type.Optional(Attributes),
  },
  { additionalProperties: false },
);
export type VariantInput = Static<typeof VariantBody>;

export const VariantSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    product_id: Type.String(),
    sku: Type.String(),
    name: Type.String(),
    price: Type.Integer(),
    currency: Type.String(),
    stock: Type.Integer(),
    attributes: Type.Record(Type.String(), Type.String()),
    version: Type.Integer(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Variant', title: 'Variant' },
);
export type VariantResponse = Static<typeof VariantSchema>;

export const ProductParams = Type.Object({ product_id: ProductId });
export const SkuParams = Type.Object({ sku: Sku });
