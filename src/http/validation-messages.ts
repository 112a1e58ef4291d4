import type { ErrorObject } from 'ajv';
import type { FieldProblem } from './errors.js';
import { NO_NUL_PATTERN } from './text-rules.js';

type Schema = Record<string, unknown>;

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

const FORMAT_NAMES: Record<string, string> = {
  email: 'a valid email address',
  'date-time': 'an RFC 3339 date-time such as 2026-11-21T20:25:00Z',
  uuid: 'a UUID',
  uri: 'an absolute URL',
};

const characters = (count: number) => `${count} character${count === 1 ? '' : 's'}`;
const describeType = (type: unknown) => [type].flat().map((name) => TYPE_NAMES[String(name)] ?? String(name)).join(' or ');

/**
 * One Ajv problem in plain words that state the rule: never a regular expression or a schema
 * keyword. A schema states its own rule for a pattern with `x-pattern-message`.
 */
function plainMessage(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  const schema = (error.parentSchema ?? {}) as Schema;
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not an allowed field';
    case 'type':
      return `must be ${describeType(params.type)}`;
    case 'minLength':
      if (Number(params.limit) !== 1) return `must be at least ${characters(Number(params.limit))}`;
      // Trimmed text is empty when it was blank: the same rule as its pattern, said once.
      return schema['x-trim'] ? 'must not be blank' : 'must not be empty';
    case 'maxLength':
      return `must be at most ${characters(Number(params.limit))}`;
    case 'minimum':
      return `must be at least ${String(params.limit)}`;
    case 'maximum':
      return `must be at most ${String(params.limit)}`;
    case 'exclusiveMinimum':
      return `must be greater than ${String(params.limit)}`;
    case 'exclusiveMaximum':
      return `must be less than ${String(params.limit)}`;
    case 'minItems':
      return `must have at least ${String(params.limit)} item${params.limit === 1 ? '' : 's'}`;
    case 'maxItems':
      return `must have at most ${String(params.limit)} items`;
    case 'maxProperties':
      return `must have at most ${String(params.limit)} keys`;
    case 'uniqueItems':
      return 'must not repeat an item';
    case 'enum':
      return `must be one of: ${(params.allowedValues as unknown[]).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(params.allowedValue)}`;
    case 'not':
      return 'const' in ((schema.not ?? {}) as Schema) ? `must not be ${JSON.stringify((schema.not as Schema).const)}` : 'is not allowed';
    case 'format':
      return `must be ${FORMAT_NAMES[String(params.format)] ?? `in ${String(params.format)} format`}`;
    case 'pattern':
      if (params.pattern === NO_NUL_PATTERN || (typeof error.data === 'string' && error.data.includes('\u0000'))) {
        return 'must not contain a NUL character';
      }
      return typeof schema['x-pattern-message'] === 'string' ? schema['x-pattern-message'] : 'is not in the expected format';
    default:
      return 'is invalid';
  }
}

function pathOf(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  const name = params.missingProperty ?? params.additionalProperty ?? (error.keyword === 'propertyNames' ? params.propertyName : undefined);
  const path = name === undefined ? error.instancePath : `${error.instancePath}/${String(name).replaceAll('~', '~0').replaceAll('/', '~1')}`;
  return path || '/';
}

/**
 * The errors of a union (`anyOf`/`oneOf`): the branch the value was meant for is the one whose
 * type it has; its problems are the ones to report. When the value has none of the branches'
 * types, one line says which types are allowed.
 */
function resolveUnions(errors: ErrorObject[]): ErrorObject[] {
  const union = errors.find((error) => error.keyword === 'anyOf' || error.keyword === 'oneOf');
  if (!union) return errors;
  const prefix = `${union.schemaPath}/`;
  const inside = errors.filter((error) => error.schemaPath.startsWith(prefix));
  const outside = errors.filter((error) => error !== union && !error.schemaPath.startsWith(prefix));
  const branches = new Map<string, ErrorObject[]>();
  for (const error of inside) {
    const branch = error.schemaPath.slice(prefix.length).split('/')[0]!;
    branches.set(branch, [...(branches.get(branch) ?? []), error]);
  }
  const wrongType = (branchErrors: ErrorObject[]) =>
    branchErrors.some((error) => (error.keyword === 'type' || error.keyword === 'const') && error.instancePath === union.instancePath);
  const candidates = [...branches.values()].filter((branchErrors) => !wrongType(branchErrors));
  if (candidates.length === 0) {
    const branchSchemas = (union.schema as Schema[] | undefined) ?? [];
    const allConst = branchSchemas.length > 0 && branchSchemas.every((branch) => 'const' in branch);
    const message = allConst
      ? `must be one of: ${branchSchemas.map((branch) => String(branch.const)).join(', ')}`
      : `must be ${branchSchemas.map((branch) => describeType(branch.type ?? 'object')).join(' or ')}`;
    return [...resolveUnions(outside), { ...union, keyword: 'union', message, params: {} }];
  }
  const chosen = candidates.reduce((best, branchErrors) => (branchErrors.length < best.length ? branchErrors : best));
  return [...resolveUnions(outside), ...resolveUnions(chosen)];
}

/** Every problem of a request, each once, in plain words, pointing into the request. */
export function describeValidationErrors(errors: ErrorObject[]): FieldProblem[] {
  const seen = new Set<string>();
  const problems: FieldProblem[] = [];
  for (const error of resolveUnions(errors)) {
    // `propertyNames` repeats the problem its inner keyword already reported, at the key's path.
    if (error.keyword === 'propertyNames' || error.keyword === 'if') continue;
    const problem = {
      // A problem with an object's key (propertyNames) points at that key.
      path: error.propertyName !== undefined ? `${error.instancePath}/${error.propertyName}` : pathOf(error),
      message: error.keyword === 'union' ? String(error.message) : plainMessage(error),
    };
    const key = `${problem.path}\n${problem.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      problems.push(problem);
    }
  }
  return problems;
}
