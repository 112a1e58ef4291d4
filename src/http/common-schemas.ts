import { Type, type SchemaOptions } from '@sinclair/typebox';

const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
/** A UUID as the service writes it (lower case): in cursors and token subjects. */
export const CANONICAL_UUID = new RegExp(UUID_PATTERN.replaceAll('a-fA-F', 'a-f'));
/** A UUID in either case: a path segment or field read by hand before it reaches a uuid column. */
export const ANY_CASE_UUID = new RegExp(UUID_PATTERN);

export const IdParams = Type.Object({
  id: Type.String({ pattern: UUID_PATTERN, description: 'A UUID, in any letter case.', examples: ['3f0c4e1a-8d5b-4c2e-9a71-2b6d0e5f4a13'] }),
});

export const Timestamp = Type.String({ format: 'date-time', description: 'RFC 3339, UTC.', examples: ['2026-11-21T20:25:00.000Z'] });

/** Some character that is not white space, and no NUL anywhere. */
export const NON_BLANK_PATTERN = '^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$';

/**
 * Free text a person types (a name, a reason, a description): stored without surrounding white
 * space (`x-trim`, applied by the validator), refused when nothing is left.
 */
export function TrimmedText(maxLength: number, options: SchemaOptions = {}) {
  return Type.String({
    minLength: 1,
    maxLength,
    pattern: NON_BLANK_PATTERN,
    'x-trim': true,
    'x-pattern-message': 'must not be blank',
    ...options,
    description: `${options.description ?? 'Text'}: 1 to ${maxLength} characters, stored without surrounding white space.`,
  });
}

/** A closed set of strings, rendered as an `enum` in the OpenAPI document and in messages. */
export function StringEnum<Values extends string[]>(values: [...Values], options: SchemaOptions = {}) {
  return Type.Unsafe<Values[number]>({ type: 'string', enum: values, ...options });
}

/** An optional `reason`, recorded with the change it explains. */
export const Reason = TrimmedText(200, { description: 'Why the change is made; recorded with it', examples: ['Requested by the customer'] });
