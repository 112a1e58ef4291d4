export interface FieldProblem {
  path: string;
  message: string;
}

export type ProblemCode =
  | 'validation_failed'
  | 'malformed_json'
  | 'invalid_parameter'
  | 'unauthenticated'
  | 'invalid_token'
  | 'invalid_credentials'
  | 'forbidden'
  | 'account_suspended'
  | 'wrong_password'
  | 'not_found'
  | 'method_not_allowed'
  | 'email_taken'
  | 'sku_taken'
  | 'variant_exists'
  | 'duplicate_attributes'
  | 'last_admin'
  | 'insufficient_funds'
  | 'idempotency_in_progress'
  | 'precondition_failed'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'idempotency_key_reused'
  | 'rate_limited'
  | 'internal'
  | 'unavailable';

export const PROBLEM_CODES: readonly ProblemCode[] = [
  'validation_failed', 'malformed_json', 'invalid_parameter', 'unauthenticated', 'invalid_token',
  'invalid_credentials', 'forbidden', 'account_suspended', 'wrong_password', 'not_found',
  'method_not_allowed', 'email_taken', 'sku_taken', 'variant_exists', 'duplicate_attributes',
  'last_admin', 'insufficient_funds', 'idempotency_in_progress', 'precondition_failed',
  'payload_too_large', 'unsupported_media_type', 'idempotency_key_reused', 'rate_limited',
  'internal', 'unavailable',
];

/** A failure the client caused or must know about; the error handler renders it as problem+json. */
export class AppError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: ProblemCode,
    readonly detail: string,
    readonly errors?: FieldProblem[],
    readonly headers?: Record<string, string>,
  ) {
    super(detail);
    this.name = 'AppError';
  }
}

export const notFound = (what = 'resource') => new AppError(404, 'not_found', `No such ${what}.`);
export const forbidden = (detail = 'Your role does not allow this action.') => new AppError(403, 'forbidden', detail);
export const validationFailed = (path: string, message: string) =>
  new AppError(400, 'validation_failed', 'The request does not match the schema.', [{ path, message }]);
export const invalidParameter = (detail: string) => new AppError(400, 'invalid_parameter', detail);
export const invalidToken = () => new AppError(401, 'invalid_token', 'The access token is invalid, expired or revoked.');
export const accountSuspended = () => new AppError(403, 'account_suspended', 'This account is suspended.');
