/**
 * The error catalogue: every problem code the service answers with, and its status. Errors are
 * made by code name (`new AppError('sku_taken', …)`); the status always comes from here.
 */
const PROBLEM_STATUS = {
  validation_failed: 400,
  malformed_json: 400,
  invalid_parameter: 400,
  malformed_request: 400,
  invalid_reset_token: 400,
  invalid_verification_token: 400,
  invalid_mfa_code: 400,
  invalid_email_code: 400,
  invalid_provider: 400,
  unauthenticated: 401,
  invalid_token: 401,
  invalid_credentials: 401,
  invalid_mfa_token: 401,
  forbidden: 403,
  account_suspended: 403,
  wrong_password: 403,
  insufficient_scope: 403,
  mfa_required: 403,
  mfa_enrollment_required: 403,
  step_up_required: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  email_taken: 409,
  sku_taken: 409,
  variant_exists: 409,
  duplicate_attributes: 409,
  last_admin: 409,
  insufficient_funds: 409,
  insufficient_stock: 409,
  reservation_closed: 409,
  webhook_disabled: 409,
  last_factor: 409,
  too_many_factors: 409,
  import_finished: 409,
  client_type: 409,
  location_code_taken: 409,
  default_location: 409,
  location_not_empty: 409,
  location_inactive: 409,
  stock_at_several_locations: 409,
  idempotency_in_progress: 409,
  precondition_failed: 412,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  headers_too_large: 431,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
} as const;

export type ProblemCode = keyof typeof PROBLEM_STATUS;
export const PROBLEM_CODES = Object.keys(PROBLEM_STATUS) as ProblemCode[];

/** For a status raised by the framework or a library with no code of ours: the code that fits it. */
const CODE_FOR_STATUS: Record<number, ProblemCode> = {
  400: 'malformed_request',
  404: 'not_found',
  405: 'method_not_allowed',
  408: 'request_timeout',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  431: 'headers_too_large',
};

export function codeForStatus(status: number): ProblemCode {
  return CODE_FOR_STATUS[status] ?? (status >= 500 ? 'internal' : 'malformed_request');
}

export interface FieldProblem {
  path: string;
  message: string;
}

/** A failure the client caused or must know about; the error handler renders it as problem+json. */
export class AppError extends Error {
  readonly statusCode: number;

  constructor(
    readonly code: ProblemCode,
    readonly detail: string,
    readonly errors?: FieldProblem[],
    readonly headers?: Record<string, string>,
    /** Members of the problem body beyond the standard ones (a login's `mfa_token` and `methods`). */
    readonly members?: Record<string, unknown>,
  ) {
    super(detail);
    this.name = 'AppError';
    this.statusCode = PROBLEM_STATUS[code];
  }
}

export const notFound = (what = 'resource') => new AppError('not_found', `No such ${what}.`);
export const forbidden = (detail = 'Your role does not allow this action.') => new AppError('forbidden', detail);
export const validationFailed = (path: string, message: string) =>
  new AppError('validation_failed', 'The request does not match the schema.', [{ path, message }]);
export const invalidParameter = (detail: string) => new AppError('invalid_parameter', detail);
export const invalidToken = () => new AppError('invalid_token', 'The access token is invalid, expired or revoked.');
export const accountSuspended = () => new AppError('account_suspended', 'This account is suspended.');
export const unavailable = (detail = 'The database is unavailable; try again shortly.') =>
  new AppError('unavailable', detail, undefined, { 'retry-after': '5' });
