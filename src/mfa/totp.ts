import { Secret, TOTP } from 'otpauth';

/** RFC 6238 as API.md section 12 fixes it: SHA-1, 6 digits, 30-second steps. */
const SETTINGS = { algorithm: 'SHA1', digits: 6, period: 30 } as const;
/** One step of drift either way: a code of the step before or after the current one is right too. */
const DRIFT_STEPS = 1;

/** A new secret: 20 random bytes, as the base32 an authenticator app takes. */
export const newTotpSecret = (): string => new Secret({ size: 20 }).base32;

/** The `otpauth://` URL an authenticator app reads (from a QR code), naming the service and the account. */
export function otpauthUrl(issuer: string, account: string, secret: string): string {
  return new TOTP({ issuer, label: account, secret: Secret.fromBase32(secret), ...SETTINGS }).toString();
}

/** The 30-second step a time falls in. */
export const stepAt = (timeMs: number): number => Math.floor(timeMs / 1000 / SETTINGS.period);

/**
 * The step whose code `code` is, among the current one and one either side, if that step is
 * later than `lastUsedStep` (a code is good once: neither it nor an earlier one is accepted
 * again); undefined when it is none of them.
 */
export function acceptedStep(secret: string, code: string, lastUsedStep: number | null, nowMs = Date.now()): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const key = Secret.fromBase32(secret);
  const current = stepAt(nowMs);
  for (let step = current - DRIFT_STEPS; step <= current + DRIFT_STEPS; step++) {
    if (lastUsedStep !== null && step <= lastUsedStep) continue;
    // TOTP.validate compares in constant time.
    const timestamp = step * SETTINGS.period * 1000;
    if (TOTP.validate({ token: code, secret: key, timestamp, window: 0, ...SETTINGS }) === 0) return step;
  }
  return undefined;
}
