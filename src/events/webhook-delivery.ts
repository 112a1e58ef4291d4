import http from 'node:http';
import https from 'node:https';
import { sql, type Kysely } from 'kysely';
import type { Database, DeliveryRow, EventRow, WebhookRow } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { claimDueRows } from '../jobs/outbox-claim.js';
import { record, SERVICE_CONTEXT } from './event-recorder.js';
import { toEventResponse } from './event-response.js';
import { signDelivery } from './webhook-signature.js';
import { guardedLookup, refuseWebhookUrl, type WebhookUrlRules } from './webhook-url-guard.js';

const SEND_TIMEOUT_MS = 10_000;
// Longer than a send may take, so a claim lapses only when its instance died mid-send.
const CLAIM_LEASE_SECONDS = 15;
const BATCH_SIZE = 20;
/** Pauses before the 2nd to 8th attempts; after the 8th fails, the delivery has failed. */
const RETRY_DELAYS_SECONDS = [5, 30, 120, 900, 3600, 21_600, 86_400];
const DISABLE_AFTER_FAILING_MS = 3 * 24 * 60 * 60 * 1000;
const MAX_ERROR_LENGTH = 500;

type Outcome = { ok: true; statusCode: number } | { ok: false; statusCode: number | null; error: string };

/** Due deliveries for this instance (see claimDueRows); the lease outlasts a send. */
function claimDueDeliveries(db: Kysely<Database>): Promise<DeliveryRow[]> {
  return claimDueRows<DeliveryRow>(db, 'webhook_deliveries', CLAIM_LEASE_SECONDS, BATCH_SIZE);
}

function send(webhook: WebhookRow, event: EventRow, rules: WebhookUrlRules): Promise<Outcome> {
  const body = JSON.stringify(toEventResponse(event));
  const timestamp = Math.floor(Date.now() / 1000);
  const url = new URL(webhook.url);
  const request = (url.protocol === 'https:' ? https : http).request;
  return new Promise((resolve) => {
    const outgoing = request(url, {
      method: 'POST',
      lookup: guardedLookup(rules),
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'user-agent': 'shop-accounts-service webhooks',
        'webhook-id': event.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signDelivery(webhook.secret, event.id, timestamp, body),
      },
    });
    // Redirects are not followed: a 3xx is an answer like any other non-2xx.
    const timer = setTimeout(() => outgoing.destroy(new Error(`no answer within ${SEND_TIMEOUT_MS / 1000} s`)), SEND_TIMEOUT_MS);
    outgoing.on('response', (response) => {
      response.resume();
      response.on('end', () => {
        clearTimeout(timer);
        const statusCode = response.statusCode ?? 0;
        resolve(statusCode >= 200 && statusCode < 300 ? { ok: true, statusCode } : { ok: false, statusCode, error: `answered ${statusCode}` });
      });
    });
    outgoing.on('error', (error) => {
      clearTimeout(timer);
      resolve({ ok: false, statusCode: null, error: error.message.slice(0, MAX_ERROR_LENGTH) });
    });
    outgoing.end(body);
  });
}

async function settle(db: Kysely<Database>, delivery: DeliveryRow, webhook: WebhookRow, outcome: Outcome): Promise<void> {
  await inTransaction(db, async (trx) => {
    if (outcome.ok) {
      await trx
        .updateTable('webhook_deliveries')
        .set({ status: 'succeeded', last_status_code: outcome.statusCode, last_error: null, delivered_at: new Date(), claimed_until: null })
        .where('id', '=', delivery.id)
        .execute();
      await trx.updateTable('webhooks').set({ failing_since: null }).where('id', '=', webhook.id).execute();
      return;
    }
    const delay = RETRY_DELAYS_SECONDS[delivery.attempts - 1];
    await trx
      .updateTable('webhook_deliveries')
      .set({
        status: delay === undefined ? 'failed' : 'pending',
        last_status_code: outcome.statusCode,
        last_error: outcome.error,
        claimed_until: null,
        ...(delay === undefined ? {} : { next_attempt_at: sql<Date>`now() + make_interval(secs => ${delay})` }),
      })
      .where('id', '=', delivery.id)
      .execute();
    const failing = await trx
      .updateTable('webhooks')
      .set({ failing_since: sql<Date>`coalesce(failing_since, now())` })
      .where('id', '=', webhook.id)
      .returning(['failing_since', 'enabled'])
      .executeTakeFirst();
    const failingSince = failing?.failing_since?.getTime() ?? Date.now();
    if (failing?.enabled && Date.now() - failingSince >= DISABLE_AFTER_FAILING_MS) {
      await trx.updateTable('webhooks').set({ enabled: false, version: sql`version + 1`, updated_at: new Date() }).where('id', '=', webhook.id).execute();
      const data = { before: { enabled: true }, after: { enabled: false }, failing_since: new Date(failingSince).toISOString() };
      await record(trx, { type: 'webhook.disabled', subjectType: 'webhook', subjectId: webhook.id, data }, SERVICE_CONTEXT);
    }
  });
}

async function deliver(db: Kysely<Database>, delivery: DeliveryRow, rules: WebhookUrlRules): Promise<void> {
  const webhook = await db.selectFrom('webhooks').selectAll().where('id', '=', delivery.webhook_id).executeTakeFirst();
  const event = await db.selectFrom('events').selectAll().where('id', '=', delivery.event_id).executeTakeFirst();
  if (!webhook || !event) return;
  if (!webhook.enabled) {
    await settle(db, { ...delivery, attempts: RETRY_DELAYS_SECONDS.length + 1 }, webhook, { ok: false, statusCode: null, error: 'the webhook is disabled' });
    return;
  }
  // The address is checked again now: a host may resolve elsewhere than when it was registered.
  const refusal = await refuseWebhookUrl(webhook.url, rules);
  const outcome = refusal ? { ok: false as const, statusCode: null, error: `url ${refusal}` } : await send(webhook, event, rules);
  await settle(db, delivery, webhook, outcome);
}

/** One pass of the delivery worker: claims due deliveries and sends them; returns how many. */
export async function deliverDueWebhooks(db: Kysely<Database>, rules: WebhookUrlRules): Promise<number> {
  const claimed = await claimDueDeliveries(db);
  await Promise.all(claimed.map((delivery) => deliver(db, delivery, rules)));
  return claimed.length;
}

/** For the metrics: how many deliveries are due now, and how long the oldest has waited. */
export async function deliveryQueueStats(db: Kysely<Database>): Promise<{ count: number; oldestAgeSeconds: number }> {
  const row = await sql<{ due: string; oldest: Date | null }>`
    select count(*) as due, min(next_attempt_at) as oldest
    from webhook_deliveries where status = 'pending' and next_attempt_at <= now()`.execute(db);
  const oldest = row.rows[0]?.oldest;
  return { count: Number(row.rows[0]?.due ?? 0), oldestAgeSeconds: oldest ? Math.max(0, (Date.now() - new Date(oldest).getTime()) / 1000) : 0 };
}
