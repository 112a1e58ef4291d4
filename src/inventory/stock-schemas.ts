import { Type } from '@sinclair/typebox';
import { IdParams, Timestamp, TrimmedText } from '../http/common-schemas.js';

const MAX_STOCK = 1e9;
const Reason = TrimmedText(200, { description: 'Why the stock moves', examples: ['Stock count'] });
const Reference = Type.Union([TrimmedText(200, { description: 'What the movement belongs to, e.g. an order number', examples: ['PO-2211'] }), Type.Null()]);
const Delta = Type.Integer({ minimum: -MAX_STOCK, maximum: MAX_STOCK, not: { const: 0 }, description: 'A non-zero number of units to add (or, negative, to take).' });

export const StockChangeBody = Type.Union(
  [
    Type.Object({ delta: Delta, reason: Reason, reference: Type.Optional(Reference) }, { additionalProperties: false }),
    Type.Object(
      { stock: Type.Integer({ minimum: 0, maximum: MAX_STOCK, description: 'The units on hand, set as is.' }), reason: Reason, reference: Type.Optional(Reference) },
      { additionalProperties: false },
    ),
  ],
  {
    description: 'Exactly one of `delta` and `stock`. The result must stay between `reserved` and 1e9.',
    examples: [{ delta: -2, reason: 'Damaged in the warehouse', reference: 'INC-77' }],
  },
);

export const StockMovementSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    variant_id: Type.String({ format: 'uuid' }),
    delta: Type.Integer(),
    stock_after: Type.Integer(),
    reason: Type.String(),
    reference: Type.Union([Type.String(), Type.Null()]),
    actor_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    created_at: Timestamp,
  },
  { $id: 'StockMovement', title: 'Stock movement' },
);

export const AdjustmentBody = Type.Object(
  {
    lines: Type.Array(Type.Object({ variant_id: IdParams.properties.id, delta: Delta }, { additionalProperties: false }), { minItems: 1, maxItems: 100 }),
    reason: Reason,
    reference: Type.Optional(Reference),
  },
  {
    additionalProperties: false,
    description: 'Several variants in one transaction: all lines move, or none. Each variant at most once.',
    examples: [{ lines: [{ variant_id: '7b1d2c3e-4f50-4a6b-8c7d-9e0f1a2b3c4d', delta: 24 }], reason: 'Delivery received', reference: 'PO-2211' }],
  },
);
