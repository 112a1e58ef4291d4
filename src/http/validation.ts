import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { withTextRules } from './text-rules.js';

/** Accepts single-label domains (admin@localhost) as well as dotted ones. */
const EMAIL_PATTERN =
  /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

function createAjv(coerceTypes: boolean) {
  // removeAdditional stays off: an unknown field must be refused, never silently dropped.
  // allErrors and verbose let a reply list every problem in words taken from the schema.
  const ajv = new Ajv.default({ coerceTypes, useDefaults: true, removeAdditional: false, allErrors: true, verbose: true, strict: false });
  addFormats.default(ajv);
  ajv.addFormat('email', EMAIL_PATTERN);
  return ajv;
}

/**
 * Bodies are validated without type coercion (`"5"` is not a number); the query string,
 * path and headers arrive as text, so there numbers and booleans are coerced. Given to Fastify
 * as its validator factory, so every plugin context uses it, whatever schemas it adds.
 */
export function buildValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const bodyAjv = createAjv(false);
  const textAjv = createAjv(true);
  return ({ schema, httpPart }) => (httpPart === 'body' ? bodyAjv : textAjv).compile(withTextRules(schema as object));
}
