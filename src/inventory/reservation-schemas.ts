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

const Allocation = Type.Object(
  {
    location_id: Type.String({ pattern: IdParams.properties.id.pattern, description: 'Where these units are held (active, unless the line holds them there already).' }),
    quantity: Quantity,
  },
  { additionalProperties: false },
);

export const ReallocationBody = Type.Object(
  {
    lines: Type.Array(
      Type.Object(
        {
          variant_id: IdParams.properties.id,
          allocations: Type.Array(Allocation, { minItems: 1, maxItems: 100, description: "Each location at most once; the quantities sum to the line's." }),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 100, description: 'Lines of the reservation, each variant at most once; the lines not named keep their allocations.' },
    ),
  },
  {
    additionalProperties: false,
    description: "Where some lines of an active reservation hold their units from now on: each named line's allocations are replaced, all or nothing.",
    examples: [
      {
        lines: [
          {
            variant_id: '7b1d2c3e-4f50-4a6b-8c7d-9e0f1a2b3c4d',
            allocations: [
              { location_id: '0f6c1a52-8f3e-4d7b-9a10-3b2c4d5e6f70', quantity: 1 },
              { location_id: '5a4b3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d', quantity: 1 },
            ],
          },
        ],
      },
    ],
  },
);
export type ReallocationInput = Static<typeof ReallocationBody>;

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
