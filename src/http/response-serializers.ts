import fastJsonStringify from 'fast-json-stringify';

type Serialize = (data: unknown) => string;
type ExternalSchemas = Record<string, object>;

// Keyed by the shared schemas' text and options, then by the route schema's text.
const compiled = new Map<string, Map<string, Serialize>>();

/**
 * Fastify's serializer factory (its default, @fastify/fast-json-stringify-compiler, with one
 * change): a response schema is compiled once per process for the same shared schemas, not
 * once per app and route. Most routes answer several statuses with `{ $ref: 'Problem' }`, and
 * building fast-json-stringify's code for each took over a second every time an app was built
 * (a test file builds dozens); a compiled serializer holds no state. The key is the text of the
 * route's schema and of the shared (`addSchema`) schemas, as Fastify copies those per app.
 */
export function buildSerializerCompiler(externalSchemas: ExternalSchemas = {}, serializerOptions: object = {}) {
  const key = JSON.stringify([externalSchemas, serializerOptions]);
  let byRouteSchema = compiled.get(key);
  if (!byRouteSchema) {
    byRouteSchema = new Map();
    compiled.set(key, byRouteSchema);
  }
  const serializers = byRouteSchema;
  return ({ schema }: { schema: object }): Serialize => {
    const text = JSON.stringify(schema);
    let serialize = serializers.get(text);
    if (!serialize) {
      // As Fastify's default does: a route schema that is itself a shared schema is not also passed as one.
      const id = (schema as { $id?: string }).$id;
      const shared = id !== undefined && id in externalSchemas ? Object.fromEntries(Object.entries(externalSchemas).filter(([name]) => name !== id)) : externalSchemas;
      serialize = fastJsonStringify(schema as never, { ...serializerOptions, schema: shared as never }) as Serialize;
      serializers.set(text, serialize);
    }
    return serialize;
  };
}
