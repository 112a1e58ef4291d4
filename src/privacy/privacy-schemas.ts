import { Type } from '@sinclair/typebox';
import { Reason } from '../http/common-schemas.js';
import { SessionSchema } from '../sessions/session-schemas.js';

export const EraseBody = Type.Object(
  { reason: Reason },
  { additionalProperties: false, examples: [{ reason: 'Erasure request of 2026-11-20, ticket 4711' }] },
);

const { current: _current, ...sessionFields } = SessionSchema.properties;
const ExportedSession = Type.Object(
  { ...sessionFields, ended_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When it ended (logout, sign-out, a credential change); null if it did not.' }) },
  { title: 'Exported session' },
);

/** The document of a data export (documentation only: the reply is streamed, not serialised). */
export const ExportSchema = Type.Object(
  {
    exported_at: Type.String({ format: 'date-time' }),
    user: Type.Ref('User', { description: "The user as GET /api/users/{id} shows it (for an erased user: what remains)." }),
    sessions: Type.Array(ExportedSession, { description: 'Every session the user has, ended ones included, oldest first.' }),
    mfa_factors: Type.Array(Type.Ref('MfaFactor'), { description: 'Confirmed second factors: names and times, never a secret or key.' }),
    ledger: Type.Array(Type.Ref('LedgerEntry'), { description: 'Every balance ledger entry, oldest first.' }),
    reservations: Type.Array(Type.Ref('Reservation'), { description: 'The reservations the user created, oldest first.' }),
    events: Type.Array(Type.Ref('Event'), {
      description: 'Every event whose subject is the user, oldest first, then every event the user made about other subjects, oldest first.',
    }),
  },
  { title: 'Data export' },
);
