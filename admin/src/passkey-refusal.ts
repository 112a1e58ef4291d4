import { WebAuthnError } from '@simplewebauthn/browser';

/**
 * What the browser said when a passkey was not used or made (the person cancelled, no matching
 * passkey, one exists already), or undefined for any other failure: those are the service's.
 */
export function passkeyRefusal(caught: unknown): string | undefined {
  return caught instanceof WebAuthnError || caught instanceof DOMException ? caught.message : undefined;
}
