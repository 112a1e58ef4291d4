import Ajv, { type ValidateFunction } from 'ajv';
import type { DataValidationCxt } from 'ajv/dist/types/index.js';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { AppError } from './errors.js';
import { withTextRules } from './text-rules.js';
import { describeValidationErrors } from './validation-messages.js';

/** Accepts single-label domains (admin@localhost) as well as dotted ones. */
const EMAIL_PATTERN =
  /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

function createAjv(coerceTypes: boolean) {
  // removeAdditional stays off: an unknown field must be refused, never silently dropped.
  // allErrors and verbose let a reply list every problem in words taken from the schema.
  const ajv = new Ajv.default({ coerceTypes, useDefaults: true, removeAdditional: false, allErrors: true, verbose: true, strict: false });
  addFormats.default(ajv);
  ajv.addFormat('email', EMAIL_PATTERN);
  // `x-trim`: free text is stored without surrounding white space (see TrimmedText).
  ajv.addKeyword({
    keyword: 'x-trim',
    modifying: true,
    schemaType: 'boolean',
    validate: (enabled: boolean, data: unknown, _schema: unknown, context?: DataValidationCxt) => {
      if (enabled && typeof data === 'string' && context?.parentData !== undefined) {
        (context.parentData as Record<string | number, unknown>)[context.parentDataProperty] = data.trim();
      }
      return true;
    },
  });
  return ajv;
}

const bodyAjv = createAjv(false);
const textAjv = createAjv(true);
const compiledBodies = new Map<string, ValidateFunction>();
const compiledTexts = new Map<string, ValidateFunction>();

/**
 * Compiles a schema once per process: every app built in it (a test file builds dozens) reuses
 * the function. Keyed by the schema's text, as Fastify hands each app its own copy of some
 * (headers, lower-cased) and routes write some inline.
 */
function compileOnce(ajv: Ajv.default, compiled: Map<string, ValidateFunction>, schema: object): ValidateFunction {
  const text = JSON.stringify(schema);
  let validate = compiled.get(text);
  if (!validate) {
    validate = ajv.compile(withTextRules(schema));
    compiled.set(text, validate);
  }
  return validate;
}

/**
 * Bodies are validated without type coercion (`"5"` is not a number); the query string,
 * path and headers arrive as text, so there numbers and booleans are coerced. Given to Fastify
 * as its validator factory, so every plugin context uses it, whatever schemas it adds.
 *
 * The two Ajv instances are the process's, not the app's: a new instance compiles JSON Schema's
 * meta-schema and every route schema again, which took about a second per app. Compiled
 * functions hold no state, so sharing them between apps changes nothing but the time.
 */
export function buildValidatorCompiler(): FastifySchemaCompiler<unknown> {
  return ({ schema, httpPart }) => (httpPart === 'body' ? compileOnce(bodyAjv, compiledBodies, schema as object) : compileOnce(textAjv, compiledTexts, schema as object));
}

/**
 * assertValid's functions by the schema object it is given (always one of the service's own, so
 * the same object each time): an import checks every row, and the schema's text as the key cost
 * a JSON.stringify of it a row, a tenth of the import's time.
 */
const assertedSchemas = new WeakMap<object, ValidateFunction>();

/**
 * Validates a value the service put together (a PATCH merged into the stored resource) with
 * the same rules and messages as a request body; 400 `validation_failed` when it breaks them.
 */
export function assertValid(schema: object, value: unknown): void {
  let validate = assertedSchemas.get(schema);
  if (!validate) {
    validate = compileOnce(bodyAjv, compiledBodies, schema);
    assertedSchemas.set(schema, validate);
  }
  if (!validate(structuredClone(value))) {
    throw new AppError('validation_failed', 'The result of the change does not match the schema.', describeValidationErrors(validate.errors ?? []));
  }
}
