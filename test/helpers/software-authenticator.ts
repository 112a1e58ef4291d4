import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { encodeCBOR, type CBORType } from '@levischuck/tiny-cbor';

/**
 * A passkey authenticator in software that really signs, for API tests (the console tests use
 * Chromium's virtual authenticator): a P-256 key pair per credential, attestation objects in
 * CBOR with `fmt: none`, and assertions signed with ES256 over the authenticator data and the
 * client data's hash, with a signature counter that moves on each use. Nothing here verifies:
 * the service does, with @simplewebauthn/server.
 */
const b64url = (bytes: Uint8Array | Buffer) => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();

const FLAG_USER_PRESENT = 0x01;
const FLAG_USER_VERIFIED = 0x04;
const FLAG_ATTESTED_DATA = 0x40;

interface Credential {
  id: Buffer;
  privateKey: KeyObject;
  publicKey: KeyObject;
  counter: number;
  userHandle: string;
}

export interface CreationOptions {
  challenge: string;
  rp: { id?: string; name: string };
  user: { id: string };
}

export interface RequestOptions {
  challenge: string;
  rpId?: string;
  allowCredentials?: { id: string }[];
}

export class SoftwareAuthenticator {
  readonly credentials: Credential[] = [];

  constructor(
    /** The origin the "browser" runs on: PUBLIC_URL's. */
    readonly origin: string,
    /** The relying party id used when options name none. */
    readonly rpId: string,
  ) {}

  private clientData(type: 'webauthn.create' | 'webauthn.get', challenge: string, origin = this.origin): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }

  /** navigator.credentials.create(), as RegistrationResponseJSON. */
  register(options: CreationOptions, overrides: { origin?: string } = {}) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const credential: Credential = { id: randomBytes(32), privateKey, publicKey, counter: 0, userHandle: options.user.id };
    this.credentials.push(credential);
    const jwk = publicKey.export({ format: 'jwk' });
    const cosePublicKey = encodeCBOR(
      new Map<number, number | Uint8Array>([
        [1, 2], // kty: EC2
        [3, -7], // alg: ES256
        [-1, 1], // crv: P-256
        [-2, new Uint8Array(Buffer.from(jwk.x!, 'base64url'))],
        [-3, new Uint8Array(Buffer.from(jwk.y!, 'base64url'))],
      ]),
    );
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(credential.id.length);
    const authData = Buffer.concat([
      sha256(options.rp.id ?? this.rpId),
      Buffer.from([FLAG_USER_PRESENT | FLAG_USER_VERIFIED | FLAG_ATTESTED_DATA]),
      Buffer.alloc(4), // sign count 0
      Buffer.alloc(16), // AAGUID: none
      idLength,
      credential.id,
      Buffer.from(cosePublicKey),
    ]);
    const attestationObject = encodeCBOR(new Map<string, CBORType>([['fmt', 'none'], ['attStmt', new Map<string, CBORType>()], ['authData', new Uint8Array(authData)]]));
    return {
      id: b64url(credential.id),
      rawId: b64url(credential.id),
      type: 'public-key' as const,
      response: {
        clientDataJSON: b64url(this.clientData('webauthn.create', options.challenge, overrides.origin)),
        attestationObject: b64url(attestationObject),
        transports: ['internal'],
      },
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
    };
  }

  /**
   * navigator.credentials.get(), as AuthenticationResponseJSON, by the first credential the
   * options allow (or the one given). `counter` forces the signature counter (a cloned key);
   * `userVerified: false` leaves the UV flag off (a security key without a PIN), else it is on.
   */
  assert(options: RequestOptions, choose: { credentialId?: string; counter?: number; origin?: string; tamper?: boolean; userVerified?: boolean } = {}) {
    const allowed = new Set((options.allowCredentials ?? []).map((descriptor) => descriptor.id));
    const credential = this.credentials.find((candidate) => (choose.credentialId ? b64url(candidate.id) === choose.credentialId : allowed.size === 0 || allowed.has(b64url(candidate.id))));
    if (!credential) throw new Error('no credential of this authenticator is allowed');
    credential.counter = choose.counter ?? credential.counter + 1;
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(credential.counter);
    const flags = FLAG_USER_PRESENT | (choose.userVerified === false ? 0 : FLAG_USER_VERIFIED);
    const authData = Buffer.concat([sha256(options.rpId ?? this.rpId), Buffer.from([flags]), counter]);
    const clientDataJSON = this.clientData('webauthn.get', options.challenge, choose.origin);
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), credential.privateKey);
    if (choose.tamper) signature[signature.length - 1]! ^= 0x01;
    return {
      id: b64url(credential.id),
      rawId: b64url(credential.id),
      type: 'public-key' as const,
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        userHandle: credential.userHandle,
      },
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
    };
  }
}
