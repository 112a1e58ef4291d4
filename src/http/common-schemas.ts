import { Type } from '@sinclair/typebox';

const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
/** A UUID as the service writes it (lower case): in cursors and token subjects. */
export const CANONICAL_UUID = new RegExp(UUID_PATTERN.replaceAll('a-fA-F', 'a-f'));

export const IdParams = Type.Object({
  id: Type.String({ pattern: UUID_PATTERN, description: 'A UUID, in any letter case.' }),
});

export const Timestamp = Type.String({ format: 'date-time', description: 'RFC 3339, UTC.' });
