import { Type } from '@sinclair/typebox';
import { Timestamp, TrimmedText } from '../http/common-schemas.js';

export const MAX_BALANCE = 1e15;

const Reason = TrimmedText(200, { description: 'Why the balance changes; kept in the ledger', examples: ['Refund for order 1042'] });

export const BalanceChangeBody = Type.Union(
  [
    Type.Object(
      {
        // Wide bounds on purpose: a result below zero is 409 insufficient_funds, above 1e15 a 400.
        delta: Type.Integer({
          minimum: -Number.MAX_SAFE_INTEGER,
          maximum: Number.MAX_SAFE_INTEGER,
          not: { const: 0 },
          description: 'Non-zero amount added atomically.',
        }),
        reason: Reason,
      },
      { additionalProperties: false },
    ),
    Type.Object(
      { balance: Type.Integer({ minimum: 0, maximum: MAX_BALANCE, description: 'New balance.' }), reason: Reason },
      { additionalProperties: false },
    ),
  ],
  { description: 'Exactly one of `delta` and `balance`, with a `reason`.', examples: [{ delta: -500, reason: 'Refund for order 1042' }] },
);

export const LedgerEntrySchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    user_id: Type.String({ format: 'uuid' }),
    delta: Type.Integer(),
    balance_after: Type.Integer(),
    currency: Type.String(),
    reason: Type.String(),
    actor_id: Type.String({ format: 'uuid' }),
    created_at: Timestamp,
  },
  { $id: 'LedgerEntry', title: 'Ledger entry' },
);
