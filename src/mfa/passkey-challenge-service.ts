import type { PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { notFound } from '../http/errors.js';
import { insertChallenge, type ChallengeOwner } from './challenge-repository.js';
import { factorsOfUser } from './factor-repository.js';
import type { MfaSettings } from './mfa-settings.js';
import { authenticationOptions, CHALLENGE_TTL_SECONDS } from './passkeys.js';

/**
 * Options for an assertion by one of the user's passkeys, its challenge kept for 5 minutes and
 * tied to the login (its mfa_token) or the session that asked: an assertion answering it is
 * accepted only there, once. 404 for a user without a passkey.
 */
export async function passkeyChallenge(db: Kysely<Database>, settings: MfaSettings, userId: string, owner: ChallengeOwner): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const passkeys = await factorsOfUser(db, userId, { type: 'webauthn' });
  if (passkeys.length === 0) throw notFound('passkey (this user has none)');
  const options = await authenticationOptions(
    settings.party,
    passkeys.map((passkey) => ({ credential_id: passkey.credential_id!, transports: passkey.transports })),
  );
  await insertChallenge(db, { value: options.challenge, purpose: 'authentication', userId, owner, ttlSeconds: CHALLENGE_TTL_SECONDS });
  return options;
}
