/**
 * Rules every string of a request obeys, added to the route schemas in one place, so that the
 * same schema refuses and documents them: no NUL character (PostgreSQL cannot store U+0000 in
 * text), in values and in object keys alike.
 */
export const NO_NUL_PATTERN = '^[^\\u0000]*$';

type JsonSchema = Record<string, unknown>;

export function withTextRules<Schema>(schema: Schema): Schema {
  if (Array.isArray(schema)) return schema.map((item) => withTextRules(item)) as Schema;
  if (schema === null || typeof schema !== 'object') return schema;
  const copy: JsonSchema = {};
  for (const [key, value] of Object.entries(schema as JsonSchema)) {
    // Examples and defaults are data, not schemas.
    copy[key] = key === 'examples' || key === 'default' || key === 'const' || key === 'enum' ? value : withTextRules(value);
  }
  if (copy.type === 'string' && copy.pattern === undefined && copy.format === undefined && copy.enum === undefined && copy.const === undefined) {
    copy.pattern = NO_NUL_PATTERN;
  }
  if (copy.type === 'object' && (copy.patternProperties !== undefined || (copy.additionalProperties !== undefined && copy.additionalProperties !== false))) {
    const names = (copy.propertyNames as JsonSchema | undefined) ?? {};
    copy.propertyNames = names.pattern === undefined ? { ...names, pattern: NO_NUL_PATTERN } : names;
  }
  return copy as Schema;
}
