import type { IdTokenSigner } from '../sessions/id-token-signer.js';
import type { TokenIssuer } from '../sessions/token-issuer.js';

/** The token endpoint's reply to a code or refresh grant (RFC 6749 §5.1, OpenID Connect Core §3.1.3.3). */
export interface TokenReply {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  /** The scopes the access token carries, space-separated. */
  scope: string;
  /** Only when `offline_access` was granted. */
  refresh_token?: string;
  /** Only when `openid` was granted. */
  id_token?: string;
}

/** What the code and refresh grants sign with. */
export interface GrantSigners {
  tokenIssuer: TokenIssuer;
  idTokens: IdTokenSigner;
  /** JWT_ISSUER: the `iss` of ID tokens. */
  issuer: string;
}

/**
 * A grant refused after its transaction ended a session (a code or a refresh token presented
 * again): the ending must commit, so the refusal comes back as a value, and the route answers
 * `invalid_grant` once the transaction is over.
 */
export interface ReplayRefusal {
  replayed: { what: 'code' | 'refresh_token'; userId: string; endedSessionIds: string[] };
}
