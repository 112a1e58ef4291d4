import { Type } from '@sinclair/typebox';

export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String({ description: 'Stable, machine-readable error code.' }),
    errors: Type.Optional(
      Type.Array(Type.Object({ path: Type.String({ description: 'JSON Pointer into the request.' }), message: Type.String() })),
    ),
  },
  { $id: 'Problem', title: 'RFC 9457 problem details' },
);

const DESCRIPTIONS: Record<number, string> = {
  400: 'Validation failed, malformed JSON, or an invalid parameter or cursor.',
  401: 'Missing, invalid, expired or revoked credentials.',
  403: 'The caller may not do this, or the account is suspended.',
  404: 'No such resource.',
  409: 'Conflict with the current state.',
  412: 'If-Match does not match the current version.',
  413: 'Body over 64 KiB.',
  415: 'The body is not application/json.',
  422: 'Idempotency-Key reused with another request.',
  429: 'Rate limited; see Retry-After.',
  503: 'The database is unavailable.',
};

/** Error replies of a route, documented as application/problem+json. */
export function problemResponses(...statuses: number[]) {
  const responses: Record<number, unknown> = {};
  for (const status of [...statuses, 429, 500, 503]) {
    responses[status] = {
      description: DESCRIPTIONS[status] ?? 'Unexpected error; only a request id is shown.',
      content: { 'application/problem+json': { schema: Type.Ref(ProblemSchema) } },
    };
  }
  return responses;
}
