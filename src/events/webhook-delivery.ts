import http from 'node:http';
import https from 'node:https';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, DeliveryRow, EventRow, WebhookRow } from '../db/tables.js';
import type { Attempt, QueueDefinition } from '../jobs/work-queue.js';
import { settleDelivery, type DeliveryAttemptColumns } from './webhook-repository.js';
import { record, SERVICE_CONTEXT } from './event-recorder.js';
import { toEventResponse } from './event-response.js';
import { signDelivery } from './webhook-signature.js';
import { guardedLookup, refuseWebhookUrl, type WebhookUrlRules } from './webhook-url-guard.js';
import { inSpan, linkTo, SpanKind, traceparentOf } from '../tracing.js';

const SEND_TIMEOUT_MS = 10_000;
/** A delivery's whole budget: the address check (DNS, 5 s at most) and the send (10 s at most). */
const DEADLINE_MS = 20_000;
/** Pauses before the 2nd to 8th attempts; after the 8th fails, the delivery has failed. */
const RETRY_DELAYS_SECONDS = [5, 30, 120, 900, 3600, 21_600, 86_400];
const DISABLE_AFTER_FAILING_MS = 3 * 24 * 60 * 60 * 1000;
const MAX_ERROR_LENGTH = 500;

/**
 * One POST of an event, in a span of its own (tracing on) linked to the trace of the request that
 * recorded the event; the span is sent as `traceparent`, so the consumer's trace joins it.
 */
function send(webhook: WebhookRow, event: EventRow, rules: WebhookUrlRules, signal: AbortSignal): Promise<Attempt<DeliveryAttemptColumns>> {
  const url = new URL(webhook.url);
  const attributes = { 'http.request.method': 'POST', 'server.address': url.hostname, 'url.scheme': url.protocol.replace(':', '') };
  return inSpan('webhook POST', { kind: SpanKind.CLIENT, attributes, links: linkTo(event.trace_parent) }, async (span) => {
    const attempt = await post(webhook, event, rules, signal, span ? { traceparent: traceparentOf(span.spanContext()) } : {});
    span?.setAttribute('http.response.status_code', Number(attempt.columns?.last_status_code ?? 0));
    return attempt;
  });
}

function post(webhook: WebhookRow, event: EventRow, rules: WebhookUrlRules, signal: AbortSignal, traceHeaders: Record<string, string>): Promise<Attempt<DeliveryAttemptColumns>> {
  const body = JSON.stringify(toEventResponse(event));
  const timestamp = Math.floor(Date.now() / 1000);
  const url = new URL(webhook.url);
  const request = (url.protocol === 'https:' ? https : http).request;
  return new Promise((resolve) => {
    const outgoing = request(url, {
      method: 'POST',
      lookup: guardedLookup(rules),
      signal,
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'user-agent': 'shop-accounts-service webhooks',
        'webhook-id': event.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signDelivery(webhook.secret, event.id, timestamp, body),
        ...traceHeaders,
      },
    });
    // Redirects are not followed: a 3xx is an answer like any other non-2xx.
    const timer = setTimeout(() => outgoing.destroy(new Error(`no answer within ${SEND_TIMEOUT_MS / 1000} s`)), SEND_TIMEOUT_MS);
    outgoing.on('response', (response) => {
      response.resume();
      response.on('end', () => {
        clearTimeout(timer);
        const statusCode = response.statusCode ?? 0;
        const columns = { last_status_code: statusCode };
        resolve(statusCode >= 200 && statusCode < 300 ? { ok: true, columns: { ...columns, delivered_at: new Date() } } : { ok: false, error: `answered ${statusCode}`, columns });
      });
    });
    outgoing.on('error', (error) => {
      clearTimeout(timer);
      resolve({ ok: false, error: error.message.slice(0, MAX_ERROR_LENGTH), columns: { last_status_code: null } });
    });
    outgoing.end(body);
  });
}

/** A webhook that failed for 3 days is disabled by the service (`webhook.disabled`); a success resets the count. */
async function noteWebhookHealth(trx: Transaction<Database>, delivery: DeliveryRow, attempt: Attempt<DeliveryAttemptColumns>): Promise<void> {
  if (attempt.ok) {
    await trx.updateTable('webhooks').set({ failing_since: null }).where('id', '=', delivery.webhook_id).execute();
    return;
  }
  const failing = await trx
    .updateTable('webhooks')
    .set({ failing_since: sql<Date>`coalesce(failing_since, now())` })
    .where('id', '=', delivery.webhook_id)
    .returning(['failing_since', 'enabled'])
    .executeTakeFirst();
  const failingSince = failing?.failing_since?.getTime() ?? Date.now();
  if (failing?.enabled && Date.now() - failingSince >= DISABLE_AFTER_FAILING_MS) {
    await trx.updateTable('webhooks').set({ enabled: false, version: sql`version + 1`, updated_at: new Date() }).where('id', '=', delivery.webhook_id).execute();
    const data = { before: { enabled: true }, after: { enabled: false }, failing_since: new Date(failingSince).toISOString() };
    await record(trx, { type: 'webhook.disabled', subjectType: 'webhook', subjectId: delivery.webhook_id, data }, SERVICE_CONTEXT);
  }
}

/**
 * Webhook deliveries on the work queue: each sent on its own, at most 2 at once per webhook on
 * an instance, so an endpoint that hangs holds up only its own deliveries. The address is
 * checked again at every attempt (a host may resolve elsewhere than when it was registered),
 * and the event is read as it is now, so a delivery of an erased user's event sends the
 * scrubbed body.
 */
export function webhookDeliveryQueue(db: Kysely<Database>, rules: WebhookUrlRules): QueueDefinition<DeliveryRow, DeliveryAttemptColumns> {
  return {
    name: 'deliver-webhooks',
    table: 'webhook_deliveries',
    settle: settleDelivery,
    deadlineMs: DEADLINE_MS,
    // Three times the deadline: a claim lapses only when its instance died mid-send.
    leaseSeconds: (3 * DEADLINE_MS) / 1000,
    concurrency: 20,
    perDestination: { column: 'webhook_id', limit: 2 },
    retryDelaySeconds: (delivery) => RETRY_DELAYS_SECONDS[delivery.attempts - 1],
    async attempt(delivery, signal) {
      const webhook = await db.selectFrom('webhooks').selectAll().where('id', '=', delivery.webhook_id).executeTakeFirst();
      const event = await db.selectFrom('events').selectAll().where('id', '=', delivery.event_id).executeTakeFirst();
      if (!webhook || !event) return { ok: false, error: 'the webhook or its event is gone', final: true };
      // A ping tests the endpoint of a disabled webhook too, before an admin enables it again.
      if (!webhook.enabled && event.type !== 'webhook.ping') return { ok: false, error: 'the webhook is disabled', final: true };
      const refusal = await refuseWebhookUrl(webhook.url, rules);
      if (refusal) return { ok: false, error: `url ${refusal}`, columns: { last_status_code: null } };
      return send(webhook, event, rules, signal);
    },
    afterSettle: (trx, delivery, attempt) => noteWebhookHealth(trx, delivery, attempt),
  };
}
