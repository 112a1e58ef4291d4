import { Secret, TOTP } from 'otpauth';

const PERIOD_MS = 30_000;

/**
 * An authenticator app in the test: codes computed from the secret the service gave, RFC 6238
 * (SHA-1, 6 digits, 30 s). The service accepts a code of the current step or one either side,
 * each step once per factor, and a step only after the last one used; `next()` hands out the
 * earliest step still good, so a test gets up to three codes a step. The step before the
 * current one is skipped when the current step ends within 2 s: it could be out of the window by
 * the time the service checks it.
 */
export class TotpDevice {
  private lastStep = -Infinity;
  private readonly secret: Secret;

  constructor(base32: string) {
    this.secret = Secret.fromBase32(base32);
  }

  codeOfStep(step: number): string {
    return TOTP.generate({ secret: this.secret, timestamp: step * PERIOD_MS, algorithm: 'SHA1', digits: 6, period: 30 });
  }

  /**
   * The code of the earliest step the service would still accept from this device. When the
   * device has used every step the service accepts now (three at most, two near a step's end),
   * it does what a person with a phone does: it waits for the next step to begin (the service's
   * clock is the wall clock, so there is no other way to get a fresh code), at most one step.
   */
  next(): string {
    for (;;) {
      const now = Date.now();
      const current = Math.floor(now / PERIOD_MS);
      const endsSoon = (current + 1) * PERIOD_MS - now < 2_000;
      const earliest = Math.max(this.lastStep + 1, endsSoon ? current : current - 1);
      if (earliest <= current + 1) {
        this.lastStep = earliest;
        return this.codeOfStep(earliest);
      }
      // Synchronous, as next() is: nothing of the test runs meanwhile, and the app has no request in flight.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, (current + 1) * PERIOD_MS - now + 50);
    }
  }

  /** The code of the step used last: a replay. */
  last(): string {
    return this.codeOfStep(this.lastStep);
  }

  /** A code no step near now has. */
  wrong(): string {
    const now = Math.floor(Date.now() / PERIOD_MS);
    const near = new Set([-2, -1, 0, 1, 2].map((offset) => this.codeOfStep(now + offset)));
    for (let candidate = 0; ; candidate++) {
      const code = String(candidate).padStart(6, '0');
      if (!near.has(code)) return code;
    }
  }
}
