import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { insertAuthorizationCode } from './authorization-code-repository.js';

/** How long a code is good for (API.md section 18, "Codes"). */
export const CODE_TTL_SECONDS = 60;

/** A code is stored only as its SHA-256: 256 random bits need no slow hash. */
export const hashAuthorizationCode = (code: string) => createHash('sha256').update(code).digest('hex');

/** What a code is bound to: the app, its redirect URI, the PKCE challenge, the nonce and the sign-in. */
export interface CodeGrant {
  clientId: string;
  userId: string;
  redirectUri: string;
  codeChallenge: string;
  nonce: string | null;
  /** The scopes granted, `openid` included when asked. */
  scopes: string[];
  /** The hosted pages' sign-in session the code came from. */
  signinSessionId: string;
  authTime: Date;
  amr: string[];
}

/** Issues a code for a granted authorization request: 32 random bytes, 43 base64url characters. */
export async function issueAuthorizationCode(db: Kysely<Database>, grant: CodeGrant): Promise<string> {
  const code = randomBytes(32).toString('base64url');
  const now = new Date();
  await insertAuthorizationCode(db, {
    id: randomUUID(),
    code_hash: hashAuthorizationCode(code),
    client_id: grant.clientId,
    user_id: grant.userId,
    redirect_uri: grant.redirectUri,
    code_challenge: grant.codeChallenge,
    nonce: grant.nonce,
    scopes: grant.scopes,
    signin_session_id: grant.signinSessionId,
    auth_time: grant.authTime,
    amr: grant.amr,
    created_at: now,
    expires_at: new Date(now.getTime() + CODE_TTL_SECONDS * 1000),
  });
  return code;
}
