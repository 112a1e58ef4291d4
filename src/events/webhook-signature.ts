import { createHmac } from 'node:crypto';

/**
 * The Standard Webhooks signature: `v1,` and the base64 HMAC-SHA256, keyed with the secret's
 * bytes (the base64 after `whsec_`), of `{webhook-id}.{webhook-timestamp}.{body}`.
 */
export function signDelivery(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}
