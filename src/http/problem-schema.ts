import { Type, type TSchema } from '@sinclair/typebox';
import { StringEnum } from './common-schemas.js';
import { PROBLEM_CODES } from './errors.js';

export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: StringEnum([...PROBLEM_CODES], { description: 'Stable, machine-readable error code: one of the catalogue (docs/api.md, Errors).' }),
    errors: Type.Optional(
      Type.Array(Type.Object({ path: Type.String({ description: 'JSON Pointer into the request.' }), message: Type.String() })),
    ),
    mfa_token: Type.Optional(
      Type.String({ pattern: '^[A-Za-z0-9_-]{43}$', description: '`mfa_required` only: send it with the second factor to POST /api/auth/login/mfa (5 minutes, single use).' }),
    ),
    methods: Type.Optional(
      Type.Array(Type.Union([Type.Literal('totp'), Type.Literal('webauthn'), Type.Literal('recovery_code')]), { description: '`mfa_required` only: the second factors the user may log in with.' }),
    ),
  },
  {
    $id: 'Problem',
    title: 'RFC 9457 problem details',
    examples: [
      {
        type: 'about:blank',
        title: 'Bad Request',
        status: 400,
        detail: 'The request does not match the schema.',
        code: 'validation_failed',
        errors: [{ path: '/name', message: 'must be at most 100 characters' }],
      },
    ],
  },
);

const DESCRIPTIONS: Record<number, string> = {
  400: 'Validation failed, malformed JSON, or an invalid parameter or cursor.',
  401: 'Missing, invalid, expired or revoked credentials.',
  403: 'The caller may not do this, or the account is suspended.',
  404: 'No such resource.',
  405: 'The path does not serve this method.',
  409: 'Conflict with the current state.',
  412: 'If-Match does not match the current version.',
  413: 'Body over the size limit.',
  415: 'The body is not application/json.',
  422: 'Idempotency-Key reused with another request.',
  429: 'Rate limited; see Retry-After.',
  503: 'The database is unavailable.',
};

const header = (description: string, schema: Record<string, unknown> = { type: 'string' }) => ({ ...schema, description });

/** The headers each error status carries. */
const PROBLEM_HEADERS: Record<number, Record<string, unknown>> = {
  401: { 'www-authenticate': header('`Bearer`, or `Bearer error="invalid_token"` for a refused token.') },
  403: {
    'www-authenticate': header(
      'With `insufficient_scope`: `Bearer error="insufficient_scope", scope="<the scope>"` (RFC 6750); with `step_up_required`: ' +
        '`Bearer error="insufficient_user_authentication", max_age=<seconds>` (RFC 9470). Absent otherwise.',
    ),
  },
  405: { allow: header('The methods this path serves, e.g. `GET, HEAD, PUT, PATCH`.') },
  429: { 'retry-after': header('Seconds until the budget refills.', { type: 'integer' }) },
  503: { 'retry-after': header('Seconds to wait before trying again.', { type: 'integer' }) },
};

/** Error replies of a route, documented as application/problem+json with their headers. */
export function problemResponses(...statuses: number[]) {
  const responses: Record<number, unknown> = {};
  for (const status of [...statuses, 429, 500, 503]) {
    responses[status] = {
      description: DESCRIPTIONS[status] ?? 'Unexpected error; only a request id is shown.',
      ...(PROBLEM_HEADERS[status] ? { headers: PROBLEM_HEADERS[status] } : {}),
      content: { 'application/problem+json': { schema: Type.Ref(ProblemSchema) } },
    };
  }
  return responses;
}

const ETAG = header('The version of the resource in double quotes (a strong ETag), e.g. `"3"`.');

/** A reply that carries one resource, with its ETag unless it has no version (and, for a creation, its Location). */
export function resourceReply(schema: TSchema, description: string, options: { location?: boolean; etag?: boolean } = {}) {
  return {
    description,
    headers: { ...(options.etag !== false ? { etag: ETAG } : {}), ...(options.location ? { location: header('The path of the new resource.') } : {}) },
    content: { 'application/json': { schema } },
  };
}

/** 304 for a single-resource GET whose If-None-Match names the current ETag. */
export const notModifiedReply = {
  description: 'Not modified: If-None-Match names the current ETag. No body.',
  headers: { etag: ETAG },
  type: 'null',
};
