import { Type, type Static } from '@sinclair/typebox';
import { IdParams, StringEnum, Timestamp, TrimmedText } from '../http/common-schemas.js';

const Quantity = Type.Integer({ minimum: 1, maximum: 1e9, description: 'Units to hold.' });
const ReservationLine = Type.Object(
  {
    variant_id: IdParams.properties.id,
    quantity: Quantity,
    location_id: Type.Optional(
      Type.String({ pattern: IdParams.properties.id.pattern, description: 'Take the units only at this location (active; unknown: 404, inactive: 409 `location_inactive`).' }),
    ),
  },
  { additionalProperties: false },
);

export const ReservationBody = Type.Object(
  {
    lines: Type.Array(ReservationLine, { minItems: 1, maxItems: 100, description: 'Each variant at most once.' }),
    reference: Type.Optional(
      Type.Union([TrimmedText(200, { description: 'What the reservation belongs to, e.g. a cart or an order number', examples: ['cart-8812'] }), Type.Null()]),
    ),
    expires_in: Type.Optional(Type.Integer({ minimum: 1, maximum: 86400, default: 900, description: 'Seconds until the units are given back unless committed.' })),
    split: Type.Optional(
      Type.Boolean({ description: 'false: a line naming no location must be held whole at one location (else 409 `insufficient_stock`). Default true.' }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'All lines are held, or none. A line naming `location_id` takes its units only there; otherwise from the first active location ' +
      '(by priority, then code) that has the whole line available, else, unless `split` is false, greedily over the active locations ' +
      'in that order.',
    examples: [{ lines: [{ variant_id: '7b1d2c3e-4f50-4a6b-8c7d-9e0f1a2b3c4d', quantity: 2 }], reference: 'cart-8812', expires_in: 600 }],
  },
);
export type ReservationInput = Static<typeof ReservationBody>;

export const ReservationSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    status: StringEnum(['active', 'committed', 'released', 'expired'], {
      description: '`active` until committed, released or expired; an active reservation is expired within 10 s after `expires_at`.',
    }),
    lines: Type.Array(
      Type.Object({
        variant_id: Type.String({ format: 'uuid' }),
        quantity: Type.Integer(),
        allocations: Type.Array(Type.Object({ location_id: Type.String({ format: 'uuid' }), quantity: Type.Integer({ minimum: 1 }) }), {
          description: 'Where the line holds (or, closed, held) its units, by location id; the quantities sum to the line\'s.',
        }),
      }),
    ),
    reference: Type.Union([Type.String(), Type.Null()]),
    expires_at: Timestamp,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Reservation', title: 'Reservation' },
);
export type ReservationResponse = Static<typeof ReservationSchema>;

export const ListReservationsQuery = Type.Object(
  {
    reference: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only reservations with exactly this reference (a cart or an order number).' })),
    status: Type.Optional(StringEnum(['active', 'committed', 'released', 'expired'], { description: 'Only reservations in this state.' })),
  },
  { additionalProperties: false },
);
