import { Type, type Static } from '@sinclair/typebox';
import { IdParams, Timestamp, TrimmedText } from '../http/common-schemas.js';

const ProductId = Type.String({
  pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$',
  'x-pattern-message': 'must be 1 to 64 characters of letters, digits and . _ : -, starting with a letter or digit',
  description: 'The owning product, opaque to this service: 1 to 64 characters of [A-Za-z0-9._:-], starting with a letter or digit.',
  examples: ['shirt-1'],
});
const Sku = Type.String({
  pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$',
  'x-pattern-message': 'must be 1 to 64 characters of letters, digits and . _ -, starting with a letter or digit',
  description: '1 to 64 characters of [A-Za-z0-9._-], starting with a letter or digit; unique without regard to case.',
  examples: ['SHIRT-1-M'],
});
const VariantName = TrimmedText(200, { description: 'The name shown to shoppers', examples: ['Shirt, M'] });
const Price = Type.Integer({ minimum: 0, maximum: 1e12, description: 'Minor units (cents), 0 to 1e12.', examples: [2999] });
const Stock = Type.Integer({ minimum: 0, maximum: 1e9, description: 'Units on hand, 0 to 1e9; 0 when left out.', examples: [12] });
const AttributeKey = { minLength: 1, maxLength: 50 };
/** The most attribute keys a variant holds (an import's CSV header is bounded by it too). */
export const MAX_ATTRIBUTE_KEYS = 20;
const Attributes = Type.Record(Type.String(), Type.String({ maxLength: 200 }), {
  maxProperties: MAX_ATTRIBUTE_KEYS,
  propertyNames: AttributeKey,
  description: 'Up to 20 keys (1..50 characters) to strings (up to 200). Two variants of one product may not have equal attributes.',
  examples: [{ size: 'M', colour: 'navy' }],
});

export const VariantBody = Type.Object(
  {
    product_id: ProductId,
    sku: Sku,
    name: VariantName,
    price: Price,
    stock: Type.Optional(Stock),
    attributes: Type.Optional(Attributes),
  },
  {
    additionalProperties: false,
    examples: [{ product_id: 'shirt-1', sku: 'SHIRT-1-M', name: 'Shirt, M', price: 2999, stock: 12, attributes: { size: 'M' } }],
  },
);
export type VariantInput = Static<typeof VariantBody>;

export const VariantPatchBody = Type.Object(
  {
    product_id: Type.Optional(ProductId),
    sku: Type.Optional(Sku),
    name: Type.Optional(VariantName),
    price: Type.Optional(Price),
    stock: Type.Optional(Type.Union([Stock, Type.Null()])),
    attributes: Type.Optional(
      Type.Union([
        Type.Record(Type.String(), Type.Union([Type.String({ maxLength: 200 }), Type.Null()]), { propertyNames: AttributeKey }),
        Type.Null(),
      ]),
    ),
  },
  {
    additionalProperties: false,
    description:
      'JSON merge patch (RFC 7396): fields left out stay; `stock: null` sets 0, `attributes: null` sets `{}`; `attributes` ' +
      'merges key by key (a key set to null is removed). The result is validated like a PUT. `{}` changes nothing.',
    examples: [{ price: 2499, attributes: { colour: null } }],
  },
);
export type VariantPatch = Static<typeof VariantPatchBody>;

export const VariantSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    product_id: Type.String(),
    sku: Type.String(),
    name: Type.String(),
    price: Type.Integer(),
    currency: Type.String(),
    stock: Type.Integer({ description: 'Units on hand: the sum of its stock movements.' }),
    reserved: Type.Integer({ description: 'Units held by active reservations.' }),
    available: Type.Integer({ description: '`stock` − `reserved` at the active locations: what can still be reserved (units at an inactive location count in `stock`, not here).' }),
    attributes: Type.Record(Type.String(), Type.String()),
    version: Type.Integer(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  {
    $id: 'Variant',
    title: 'Variant',
    examples: [
      {
        id: '7b1d2c3e-4f50-4a6b-8c7d-9e0f1a2b3c4d',
        product_id: 'shirt-1',
        sku: 'SHIRT-1-M',
        name: 'Shirt, M',
        price: 2999,
        currency: 'USD',
        stock: 12,
        reserved: 2,
        available: 10,
        attributes: { size: 'M' },
        version: 1,
        created_at: '2026-11-21T20:25:00.000Z',
        updated_at: '2026-11-21T20:25:00.000Z',
      },
    ],
  },
);
export type VariantResponse = Static<typeof VariantSchema>;

export const ProductParams = Type.Object({ product_id: ProductId });
export const SkuParams = Type.Object({ sku: Sku });

export const ListVariantsQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Case-insensitive substring of SKU or name.' })),
    product_id: Type.Optional(ProductId),
    in_stock: Type.Optional(Type.Boolean({ description: '`true`: only variants with units available; `false`: only those without.' })),
  },
  { additionalProperties: false },
);

const IfMatchTag = Type.String({
  pattern: '^(\\*|(W/)?"[0-9]+")$',
  'x-pattern-message': 'must be the ETag you read: a version in double quotes, such as "3" (or *)',
  description: 'The ETag the variant must still have, e.g. `"3"`.',
});
const BatchOperation = Type.Union([
  Type.Object(
    { op: Type.Literal('create'), id: Type.Optional(IdParams.properties.id), variant: VariantBody },
    { additionalProperties: false, title: 'Create' },
  ),
  Type.Object(
    { op: Type.Literal('update'), id: IdParams.properties.id, if_match: Type.Optional(IfMatchTag), variant: VariantBody },
    { additionalProperties: false, title: 'Update (replace)' },
  ),
  Type.Object(
    { op: Type.Literal('delete'), id: IdParams.properties.id, if_match: Type.Optional(IfMatchTag) },
    { additionalProperties: false, title: 'Delete' },
  ),
]);
export type BatchOperationInput = Static<typeof BatchOperation>;

export const BatchBody = Type.Object(
  { operations: Type.Array(BatchOperation, { minItems: 1, maxItems: 100 }) },
  {
    additionalProperties: false,
    description: '1 to 100 operations, run in order in one transaction: all are stored, or none.',
    examples: [
      {
        operations: [
          { op: 'create', variant: { product_id: 'shirt-1', sku: 'SHIRT-1-L', name: 'Shirt, L', price: 2999, attributes: { size: 'L' } } },
          { op: 'update', id: '7b1d2c3e-4f50-4a6b-8c7d-9e0f1a2b3c4d', if_match: '"1"', variant: { product_id: 'shirt-1', sku: 'SHIRT-1-M', name: 'Shirt, M', price: 2499, attributes: { size: 'M' } } },
          { op: 'delete', id: '0d9c8b7a-6f5e-4d3c-8b2a-1f0e9d8c7b6a' },
        ],
      },
    ],
  },
);

export const BatchResultSchema = Type.Object({
  results: Type.Array(
    Type.Object({
      op: Type.String({ enum: ['create', 'update', 'delete'] }),
      id: Type.String({ format: 'uuid' }),
      status: Type.Integer({ description: 'What the single call would have answered: 201, 200 or 204.' }),
      variant: Type.Optional(Type.Ref(VariantSchema)),
    }),
  ),
});
