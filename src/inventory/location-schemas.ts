import { Type, type Static } from '@sinclair/typebox';
import { StringEnum, Timestamp, TrimmedText } from '../http/common-schemas.js';

const Code = Type.String({
  pattern: '^[A-Za-z0-9_-]{1,32}$',
  'x-pattern-message': 'must be 1 to 32 characters of letters, digits, _ and -',
  description: '1 to 32 characters of [A-Za-z0-9_-]; unique without regard to case, and stored as sent.',
  examples: ['berlin-1'],
});
const LocationName = TrimmedText(100, { description: 'What staff call the location', examples: ['Berlin warehouse'] });
const Priority = Type.Integer({ minimum: 0, maximum: 1000, description: 'Lower first (then by code): 0 to 1000; 100 when left out.', examples: [10] });
const Status = StringEnum(['active', 'inactive'], { description: '`active` when left out. The default location is always active.' });

export const LocationSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    code: Type.String(),
    name: Type.String(),
    priority: Type.Integer(),
    status: StringEnum(['active', 'inactive']),
    is_default: Type.Boolean({ description: 'Exactly one location is the default.' }),
    version: Type.Integer(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  {
    $id: 'Location',
    title: 'Location',
    examples: [
      {
        id: '5d3c2b1a-0f9e-4d8c-b7a6-958473625140',
        code: 'default',
        name: 'Default',
        priority: 100,
        status: 'active',
        is_default: true,
        version: 1,
        created_at: '2026-11-22T08:00:00.000Z',
        updated_at: '2026-11-22T08:00:00.000Z',
      },
    ],
  },
);

export const LocationListSchema = Type.Object(
  { items: Type.Array(Type.Ref(LocationSchema), { description: 'Every location, by priority, then code (without regard to case); not paged.' }) },
  { additionalProperties: false },
);

export const CreateLocationBody = Type.Object(
  { code: Code, name: LocationName, priority: Type.Optional(Priority), status: Type.Optional(Status) },
  { additionalProperties: false, examples: [{ code: 'berlin-1', name: 'Berlin warehouse', priority: 10 }] },
);
export type CreateLocationInput = Static<typeof CreateLocationBody>;

export const PatchLocationBody = Type.Object(
  {
    code: Type.Optional(Code),
    name: Type.Optional(LocationName),
    priority: Type.Optional(Priority),
    status: Type.Optional(Status),
    is_default: Type.Optional(
      Type.Literal(true, {
        description: 'Only `true`: this location becomes the default, and the one that was loses the mark in the same change.',
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'JSON merge patch (RFC 7396): fields left out stay. Every field is required of a location, so `null` is a 400 for each. ' +
      '`{}` changes nothing and does not move `version`.',
    examples: [{ name: 'Berlin, hall 2' }, { is_default: true }, { status: 'inactive' }],
  },
);
export type LocationPatch = Static<typeof PatchLocationBody>;
