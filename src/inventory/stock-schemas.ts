import { Type } from '@sinclair/typebox';
import { IdParams, Timestamp, TrimmedText } from '../http/common-schemas.js';

const MAX_STOCK = 1e9;
const Reason = TrimmedText(200, { description: 'Why the stock moves', examples: ['Stock count'] });
const Reference = Type.Union([TrimmedText(200, { description: 'What the movement belongs to, e.g. an order number', examples: ['PO-2211'] }), Type.Null()]);
const LocationId = Type.String({
  pattern: IdParams.properties.id.pattern,
  description: 'The location where the stock moves (API.md section 21); left out, the default location. An inactive location may be counted and corrected.',
  examples: ['5a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d'],
});
const Delta = Type.Integer({ minimum: -MAX_STOCK, maximum: MAX_STOCK, not: { const: 0 }, description: 'A non-zero number of units to add (or, negative, to take).' });

export const StockChangeBody = Type.Union(
  [
    Type.Object({ delta: Delta, location_id: Type.Optional(LocationId), reason: Reason, reference: Type.Optional(Reference) }, { additionalProperties: false }),
    Type.Object(
      {
        stock: Type.Integer({ minimum: 0, maximum: MAX_STOCK, description: 'The units on hand at the location, set as is.' }),
        location_id: Type.Optional(LocationId),
        reason: Reason,
        reference: Type.Optional(Reference),
      },
      { additionalProperties: false },
    ),
  ],
  {
    description:
      'Exactly one of `delta` and `stock`, applied at `location_id` (default: the default location). The result must stay between ' +
      "the location's `reserved` and 1e9, and the variant's total within 1e9.",
    examples: [{ delta: -2, reason: 'Damaged in the warehouse', reference: 'INC-77' }],
  },
);

export const StockMovementSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    variant_id: Type.String({ format: 'uuid' }),
    location_id: Type.String({ format: 'uuid', description: 'Where the stock moved.' }),
    delta: Type.Integer(),
    stock_after: Type.Integer({ description: 'The stock at that location after the movement.' }),
    reason: Type.String(),
    reference: Type.Union([Type.String(), Type.Null()]),
    actor_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    created_at: Timestamp,
  },
  { $id: 'StockMovement', title: 'Stock movement' },
);

export const AdjustmentBody = Type.Object(
  {
    lines: Type.Array(Type.Object({ variant_id: IdParams.properties.id, location_id: Type.Optional(LocationId), delta: Delta }, { additionalProperties: false }), { minItems: 1, maxItems: 100 }),
    reason: Reason,
    reference: Type.Optional(Reference),
  },
  {
    additionalProperties: false,
    description:
      'Several variants in one transaction: all lines move, or none. Each line at `location_id` (default: the default location); ' +
      'each pair of variant and location at most once.',
    examples: [{ lines: [{ variant_id: '7b1d2c3e-4f50-4a6b-8c7d-9e0f1a2b3c4d', delta: 24 }], reason: 'Delivery received', reference: 'PO-2211' }],
  },
);

const LevelFigures = {
  stock: Type.Integer({ minimum: 0 }),
  reserved: Type.Integer({ minimum: 0 }),
  available: Type.Integer({ description: '`stock` - `reserved`.' }),
};

export const VariantStockSchema = Type.Object(
  {
    variant_id: Type.String({ format: 'uuid' }),
    stock: Type.Integer({ minimum: 0, description: 'The sum over every location.' }),
    reserved: Type.Integer({ minimum: 0, description: 'The sum over every location.' }),
    available: Type.Integer({ description: 'The sum of `available` over active locations only.' }),
    locations: Type.Array(
      Type.Object({
        location_id: Type.String({ format: 'uuid' }),
        code: Type.String(),
        status: Type.Union([Type.Literal('active'), Type.Literal('inactive')]),
        ...LevelFigures,
      }),
      { description: 'Every location, by priority, then code, zeros included.' },
    ),
  },
  { $id: 'VariantStock', title: "A variant's stock per location" },
);

export const TransferBody = Type.Object(
  {
    from_location_id: Type.String({ pattern: IdParams.properties.id.pattern, description: 'Where the units leave (it may be inactive).' }),
    to_location_id: Type.String({ pattern: IdParams.properties.id.pattern, description: 'Where they arrive: another location, active.' }),
    lines: Type.Array(
      Type.Object({ variant_id: IdParams.properties.id, quantity: Type.Integer({ minimum: 1, maximum: MAX_STOCK }) }, { additionalProperties: false }),
      { minItems: 1, maxItems: 100 },
    ),
    reason: Reason,
    reference: Type.Optional(Reference),
  },
  {
    additionalProperties: false,
    description: 'Units of several variants moved between two locations: all lines, or none. Each variant at most once.',
    examples: [
      {
        from_location_id: '5a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
        to_location_id: '6b2c3d4e-5f60-4b7c-8d9e-0f1a2b3c4d5e',
        lines: [{ variant_id: '7b1d2c3e-4f50-4a6b-8c7d-9e0f1a2b3c4d', quantity: 4 }],
        reason: 'Restock the store',
        reference: 'TR-19',
      },
    ],
  },
);
