import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { COSEALG } from '@simplewebauthn/server/helpers';

/** The relying party passkeys are made for: WEBAUTHN_RP_ID, PUBLIC_URL's origin, MFA_ISSUER. */
export interface RelyingParty {
  id: string;
  origin: string;
  name: string;
}

/**
 * The signature algorithms a passkey may use: EdDSA, ES256 and RS256, on every Node.js the
 * service supports. SimpleWebAuthn's default puts ML-DSA-44 first where the runtime has it
 * (Node 24, as an experimental WebCrypto feature): a key made with it could not be verified
 * once the service runs on Node 22, which lacks it, and Chromium's authenticator did not
 * complete a registration so offered (the console's browser test, under Node 24).
 */
const ALGORITHMS = [COSEALG.EdDSA, COSEALG.ES256, COSEALG.RS256];

/** A challenge is good for 5 minutes; the browser is told the same. */
export const CHALLENGE_TTL_SECONDS = 300;

/** A stored passkey, as verification needs it. */
export interface StoredPasskey {
  credential_id: string;
  public_key: Uint8Array;
  sign_count: number;
  transports: string[] | null;
}

const descriptorOf = (passkey: Pick<StoredPasskey, 'credential_id' | 'transports'>) => ({
  id: passkey.credential_id,
  ...(passkey.transports ? { transports: passkey.transports } : {}),
});

/** The user handle: the user's id as its 16 bytes (no personal data). */
const userHandle = (userId: string) => Uint8Array.from(Buffer.from(userId.replace(/-/g, ''), 'hex'));

/**
 * Whether an assertion's user handle (base64url) is this user's. The handle is not what finds the
 * user (the credential id does: it belongs to one user), and the signature does not cover it; a
 * handle that names someone else comes from a confused or forged client and is refused.
 */
export const isUserHandleOf = (handle: string, userId: string) => Buffer.from(handle, 'base64url').toString('hex') === userId.replace(/-/g, '').toLowerCase();

/** Options for a new passkey: attestation `none`, user verification preferred, the user's passkeys excluded. */
export function registrationOptions(
  party: RelyingParty,
  user: { id: string; email: string; name: string },
  existing: Pick<StoredPasskey, 'credential_id' | 'transports'>[],
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  return generateRegistrationOptions({
    rpName: party.name,
    rpID: party.id,
    userID: userHandle(user.id),
    userName: user.email,
    userDisplayName: user.name,
    timeout: CHALLENGE_TTL_SECONDS * 1000,
    attestationType: 'none',
    excludeCredentials: existing.map(descriptorOf),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
    supportedAlgorithmIDs: ALGORITHMS,
  });
}

/** Options for an assertion by one of the user's passkeys. */
export function authenticationOptions(party: RelyingParty, passkeys: Pick<StoredPasskey, 'credential_id' | 'transports'>[]): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return generateAuthenticationOptions({
    rpID: party.id,
    allowCredentials: passkeys.map(descriptorOf),
    userVerification: 'preferred',
    timeout: CHALLENGE_TTL_SECONDS * 1000,
  });
}

/**
 * Options for a sign-in by a discoverable passkey (API.md section 19): no `allowCredentials`, so
 * the browser offers whichever passkeys of this relying party it holds; nobody is known yet.
 */
export function signInOptions(party: RelyingParty): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return generateAuthenticationOptions({ rpID: party.id, userVerification: 'preferred', timeout: CHALLENGE_TTL_SECONDS * 1000 });
}

/**
 * The challenge a registration or an assertion answers, read from its client data (what the
 * browser signed over), so the stored challenge can be found and spent; undefined when the
 * client data is not readable.
 */
export function challengeOf(credential: { response: { clientDataJSON: string } }): string | undefined {
  try {
    const clientData = JSON.parse(Buffer.from(credential.response.clientDataJSON, 'base64url').toString('utf8')) as { challenge?: unknown };
    return typeof clientData.challenge === 'string' && clientData.challenge.length > 0 ? clientData.challenge : undefined;
  } catch {
    return undefined;
  }
}

/** A verified registration's passkey, or undefined for any response that does not verify. */
export async function verifiedRegistration(party: RelyingParty, response: RegistrationResponseJSON, challenge: string): Promise<Omit<StoredPasskey, 'sign_count'> & { sign_count: number } | undefined> {
  try {
    const result = await verifyRegistrationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: party.origin,
      expectedRPID: party.id,
      requireUserVerification: false,
      supportedAlgorithmIDs: ALGORITHMS,
    });
    if (!result.verified) return undefined;
    const { credential } = result.registrationInfo;
    return { credential_id: credential.id, public_key: credential.publicKey, sign_count: credential.counter, transports: credential.transports ?? null };
  } catch {
    return undefined;
  }
}

/** What a verified assertion tells: the passkey's new signature counter, and whether the authenticator verified the user (the UV flag). */
export interface VerifiedAssertion {
  counter: number;
  userVerified: boolean;
}

/**
 * A verified assertion's counter and UV flag, or undefined for any assertion that does not
 * verify (a bad signature, another origin or challenge, a counter that did not move past the
 * stored one: a cloned authenticator). User verification is not required: it is reported.
 */
export async function verifiedAssertion(party: RelyingParty, response: AuthenticationResponseJSON, challenge: string, passkey: StoredPasskey): Promise<VerifiedAssertion | undefined> {
  try {
    const result = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: party.origin,
      expectedRPID: party.id,
      credential: { id: passkey.credential_id, publicKey: passkey.public_key as never, counter: passkey.sign_count, ...(passkey.transports ? { transports: passkey.transports } : {}) },
      requireUserVerification: false,
    });
    return result.verified ? { counter: result.authenticationInfo.newCounter, userVerified: result.authenticationInfo.userVerified } : undefined;
  } catch {
    return undefined;
  }
}
