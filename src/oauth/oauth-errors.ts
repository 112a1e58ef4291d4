/** An error of the authorization server's endpoints in RFC 6749 section 5.2's words (`{error, error_description}`). */
export class OAuthError extends Error {
  constructor(
    readonly error: 'invalid_request' | 'invalid_client' | 'invalid_grant' | 'unauthorized_client' | 'unsupported_grant_type' | 'invalid_scope' | 'insufficient_scope' | 'rate_limited',
    readonly description: string,
    readonly status: number,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
  }
}

const BASIC_CHALLENGE = { 'www-authenticate': 'Basic realm="shop-accounts", charset="UTF-8"' };

/** 401 `invalid_client`, with the Basic challenge when the client tried HTTP Basic (RFC 6749 §5.2). */
export const invalidClient = (viaBasic: boolean, description = 'The client is unknown, disabled or deleted, or its secret is wrong, expired or deleted.') =>
  new OAuthError('invalid_client', description, 401, viaBasic ? BASIC_CHALLENGE : {});

export const noCredentials = () => new OAuthError('invalid_client', 'Authenticate the client with HTTP Basic, or with client_id and client_secret.', 401);
