// Verifies a webhook delivery of the shop accounts service, two ways: with the `standardwebhooks`
// package (npm i standardwebhooks), and by hand with node:crypto alone. Both take the raw body
// exactly as it arrived (verify before parsing: re-serialised JSON signs differently), the
// headers, and the secret the service showed once when the webhook was created (`whsec_…`).
// test/events/webhook-delivery.test.ts runs both against a real delivery.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** With the library: throws when the signature or the timestamp (5 minutes either way) is wrong. */
export function verifyWithLibrary(secret, rawBody, headers) {
  return new Webhook(secret).verify(rawBody, {
    'webhook-id': headers['webhook-id'],
    'webhook-timestamp': headers['webhook-timestamp'],
    'webhook-signature': headers['webhook-signature'],
  });
}

/** By hand: the same checks, in a dozen lines. Returns the parsed event, or throws. */
export function verifyByHand(secret, rawBody, headers, now = Date.now()) {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  if (!id || !timestamp || !headers['webhook-signature']) throw new Error('not a signed delivery');
  if (Math.abs(now / 1000 - Number(timestamp)) > 300) throw new Error('timestamp too far from now: a replay?');
  // The key is the base64-DECODED part after `whsec_`, not those characters as text.
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${rawBody}`).digest();
  // The header may list several space-separated signatures (`v1,<base64>`) while a secret rolls.
  const matches = headers['webhook-signature'].split(' ').some((entry) => {
    const [version, signature] = entry.split(',');
    const given = Buffer.from(signature ?? '', 'base64');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw new Error('bad signature');
  return JSON.parse(rawBody);
}
