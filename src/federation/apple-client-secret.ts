import { createPrivateKey, sign, type KeyObject } from 'node:crypto';

/** Apple's audience of the client secret JWT. */
export const APPLE_AUDIENCE = 'https://appleid.apple.com';
/** Apple accepts a client secret for at most six months; the service signs one for far less and signs again. */
export const APPLE_SECRET_MAX_SECONDS = 180 * 24 * 60 * 60;
const DEFAULT_LIFETIME_SECONDS = 60 * 60;

/**
 * The key Apple gives (a PKCS #8 PEM of a P-256 key, as the .p8 file holds it), or undefined
 * when the text is not one: the service signs ES256 with it, which needs exactly that curve.
 */
export function appleSigningKey(pem: string): KeyObject | undefined {
  try {
    const key = createPrivateKey({ key: pem, format: 'pem' });
    return key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1' ? key : undefined;
  } catch {
    return undefined;
  }
}

const base64url = (value: object | Buffer) => (Buffer.isBuffer(value) ? value : Buffer.from(JSON.stringify(value))).toString('base64url');

/**
 * The client secret Sign in with Apple requires in place of a fixed one: a JWT signed ES256 with
 * the team's key, `iss` the team id, `sub` the service's client id (its Services ID), `aud`
 * Apple, `kid` the key's id, valid `lifetimeSeconds` (an hour unless asked, never over six
 * months). The flow signs a fresh one for each code it exchanges, so none needs keeping.
 */
export function signAppleClientSecret(input: { teamId: string; keyId: string; clientId: string; privateKeyPem: string; now?: Date; lifetimeSeconds?: number }): string {
  const key = appleSigningKey(input.privateKeyPem);
  if (!key) throw new Error('the Apple private key is not a PEM of a P-256 key');
  const lifetime = Math.min(input.lifetimeSeconds ?? DEFAULT_LIFETIME_SECONDS, APPLE_SECRET_MAX_SECONDS);
  const issuedAt = Math.floor((input.now ?? new Date()).getTime() / 1000);
  const signingInput = `${base64url({ alg: 'ES256', kid: input.keyId, typ: 'JWT' })}.${base64url({ iss: input.teamId, sub: input.clientId, aud: APPLE_AUDIENCE, iat: issuedAt, exp: issuedAt + lifetime })}`;
  // JWS wants the raw r||s signature (RFC 7518, 3.4), not node's DER default.
  const signature = sign('sha256', Buffer.from(signingInput), { key, dsaEncoding: 'ieee-p1363' });
  return `${signingInput}.${base64url(signature)}`;
}
