import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const SEALED = 'aes256gcm:';
const PLAIN = 'plain:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A sealed value that its key does not open: the wrong key, or a value tampered with. */
export class SealError extends Error {}

/** AES-256-GCM with a random nonce: `aes256gcm:` and the base64 of nonce, tag and ciphertext. */
export function sealWithKey(key: Buffer, plain: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return `${SEALED}${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
}

export function unsealWithKey(key: Buffer, sealed: string): string {
  if (!sealed.startsWith(SEALED)) throw new SealError('the value is not sealed');
  const bytes = Buffer.from(sealed.slice(SEALED.length), 'base64');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES));
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    throw new SealError('the key does not open this value');
  }
}

/** A key derived from a secret the holder alone has (a refresh token sealing its successor). */
export const keyFromSecret = (purpose: string, secret: string) => createHash('sha256').update(`${purpose}\n${secret}`).digest();

export const isSealed = (value: string) => value.startsWith(SEALED);

/**
 * Secrets the service must read back (private signing keys, a live verification link), kept
 * sealed with SIGNING_KEY_ENCRYPTION_KEY when it is set. Without it they are kept as they are
 * (`plain:`, or a PEM as earlier versions wrote it): whoever reads the database could then
 * also read the private signing keys, which is worse, and SECURITY.md says so.
 */
export class SecretsAtRest {
  constructor(private readonly key: Buffer | undefined) {}

  get encrypts(): boolean {
    return this.key !== undefined;
  }

  seal(plain: string): string {
    return this.key ? sealWithKey(this.key, plain) : `${PLAIN}${plain}`;
  }

  /** The value; throws SealError for a sealed value without the right key. */
  open(stored: string): string {
    if (isSealed(stored)) {
      if (!this.key) throw new SealError('the value is sealed and SIGNING_KEY_ENCRYPTION_KEY is not set');
      return unsealWithKey(this.key, stored);
    }
    return stored.startsWith(PLAIN) ? stored.slice(PLAIN.length) : stored;
  }
}
