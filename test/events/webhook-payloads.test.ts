import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { EVENT_TYPES, type EventType } from '../../src/events/event-types.js';
import { toEventResponse } from '../../src/events/event-response.js';
import { webhookPayloadSchema } from '../../src/events/webhook-payloads.js';
import { inTransaction } from '../../src/db/transaction.js';
import { SERVICE_CONTEXT } from '../../src/events/event-recorder.js';
import { linkIdentity } from '../../src/federation/identity-service.js';
import { createUser, newVariantBody, useAppWithAdmin } from '../helpers/test-app.js';
import { startUpstreamProvider } from '../helpers/upstream-provider.js';

const ajv = new Ajv.default({ allErrors: true, strict: false });
addFormats.default(ajv);

describe('webhook payloads as the OpenAPI document states them', () => {
  const fixture = useAppWithAdmin({ environment: { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  const checked = new Set<EventType>();
  after(() => {
    // Every type has an entry; the types this suite does not make are described from the code that records them.
    assert.ok(checked.size >= 20, `only ${checked.size} event types were made`);
  });

  it('lists one webhook per event type in /openapi.json, each with the Standard Webhooks headers and a body whose type is that type', async () => {
    const document = (await fixture.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    assert.deepEqual(Object.keys(document.webhooks).sort(), [...EVENT_TYPES].sort());
    const ping = document.webhooks['webhook.ping'].post;
    assert.deepEqual(ping.parameters.map((parameter: { name: string }) => parameter.name), ['webhook-id', 'webhook-timestamp', 'webhook-signature']);
    assert.equal(ping.requestBody.content['application/json'].schema.properties.type.const, 'webhook.ping');
    assert.equal(document.info.version, JSON.parse(await import('node:fs').then((fs) => fs.readFileSync('package.json', 'utf8'))).version);
    assert.ok(document.components.schemas.Problem.properties.code.enum.includes('insufficient_stock'));
  });

  it('matches every event the service records, as it is sent, for the changes of users, variants, reservations, webhooks, API clients, locations and identity providers', async () => {
    const { app, admin } = fixture;
    const call = async (method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: object, headers: Record<string, string> = {}) => {
      const response = await app.inject({ method, url, headers: { ...admin.auth, ...headers }, ...(payload ? { payload } : {}) });
      assert.ok(response.statusCode < 300, `${method} ${url}: ${response.statusCode} ${response.body}`);
      return response.statusCode === 204 ? undefined : response.json();
    };
    const customer = await createUser(app);
    await call('PUT', `/api/users/${customer.id}/role`, { role: 'manager', reason: 'Spring catalogue' });
    await call('PUT', `/api/users/${customer.id}/status`, { status: 'suspended', reason: 'Review' });
    await call('PUT', `/api/users/${customer.id}/status`, { status: 'active' });
    await call('PUT', `/api/users/${customer.id}/balance`, { delta: 500, reason: 'Refund' });
    await call('PATCH', '/api/users/profile', { name: 'Renamed Admin' }, { 'content-type': 'application/merge-patch+json' });
    await call('DELETE', `/api/users/${customer.id}/sessions`);
    const variant = await call('POST', '/api/variants', newVariantBody(10, 'payload'));
    await call('PATCH', `/api/variants/${variant.id}`, { price: 250, attributes: { colour: 'navy' } }, { 'content-type': 'application/merge-patch+json' });
    await call('PUT', `/api/variants/${variant.id}/stock`, { delta: 5, reason: 'Delivery' });
    const committed = await call('POST', '/api/reservations', { lines: [{ variant_id: variant.id, quantity: 2 }], reference: 'cart-1' });
    await call('POST', `/api/reservations/${committed.id}/commit`);
    const released = await call('POST', '/api/reservations', { lines: [{ variant_id: variant.id, quantity: 1 }] });
    await call('POST', `/api/reservations/${released.id}/release`);
    await call('DELETE', `/api/variants/${variant.id}`);
    const webhook = await call('POST', '/api/webhooks', { url: 'http://127.0.0.1:9/hooks', events: ['variant.created'] });
    await call('PUT', `/api/webhooks/${webhook.id}`, { url: 'http://127.0.0.1:9/other', events: ['*'], enabled: false });
    await call('POST', `/api/webhooks/${webhook.id}/ping`);
    await call('DELETE', `/api/webhooks/${webhook.id}`);
    const client = await call('POST', '/api/clients', { name: 'Checkout', scopes: ['reservations:write'] });
    const secret = await call('POST', `/api/clients/${client.id}/secrets`, {});
    await call('DELETE', `/api/clients/${client.id}/secrets/${secret.id}`);
    await call('PATCH', `/api/clients/${client.id}`, { status: 'disabled' });
    await call('DELETE', `/api/clients/${client.id}`);
    // An app: a public one has no secret, so its client.created has no first_key.
    const publicApp = await call('POST', '/api/clients', { name: 'Shop app', type: 'public', scopes: ['openid'], redirect_uris: ['com.example.shop:/callback'] });
    await call('PATCH', `/api/clients/${publicApp.id}`, { redirect_uris: ['https://shop.example.com/cb'], first_party: true, logo_uri: 'https://cdn.example.com/logo.png' }, { 'content-type': 'application/merge-patch+json' });
    await call('DELETE', `/api/clients/${publicApp.id}`);
    const location = await call('POST', '/api/locations', { code: 'payload-hall', name: 'Hall' });
    await call('PATCH', `/api/locations/${location.id}`, { priority: 5, is_default: true }, { 'content-type': 'application/merge-patch+json' });
    const [theDefault] = await fixture.db.selectFrom('locations').select('id').where('code', '=', 'default').execute();
    await call('PATCH', `/api/locations/${theDefault!.id}`, { is_default: true });
    await call('DELETE', `/api/locations/${location.id}`);
    // A reservation moved to another location (reservation.reallocated).
    const store = await call('POST', '/api/locations', { code: 'payload-store', name: 'Store' });
    const stocked = await call('POST', '/api/variants', newVariantBody(3, 'payload'));
    await call('PUT', `/api/variants/${stocked.id}/stock`, { stock: 2, location_id: store.id, reason: 'Count' });
    const moving = await call('POST', '/api/reservations', { lines: [{ variant_id: stocked.id, quantity: 2 }], reference: 'cart-2' });
    await call('POST', `/api/reservations/${moving.id}/reallocate`, { lines: [{ variant_id: stocked.id, allocations: [{ location_id: store.id, quantity: 2 }] }] });
    // An identity provider (against a live upstream, whose discovery document a save reads) and an identity linked through it.
    const upstream = await startUpstreamProvider({ client: { client_id: 'shop', client_secret: 'payload-secret', redirect_uris: ['http://127.0.0.1:3000/oauth/callback/any'] } });
    try {
      const provider = await call('POST', '/api/identity-providers', { name: 'Upstream', issuer: upstream.issuer, client_id: 'shop', client_secret: 'payload-secret', button_label: 'Upstream' });
      await call('PATCH', `/api/identity-providers/${provider.id}`, { enabled: false, client_secret: 'rotated' }, { 'content-type': 'application/merge-patch+json' });
      const identity = await inTransaction(fixture.db, (trx) => linkIdentity(trx, { userId: admin.id, providerId: provider.id, subject: 'payload-sub', email: null, usedNow: true }, SERVICE_CONTEXT));
      await call('DELETE', `/api/users/profile/identities/${identity.id}`);
      await call('DELETE', `/api/identity-providers/${provider.id}`);
    } finally {
      await upstream.stop();
    }
    await call('DELETE', `/api/users/${customer.id}`, undefined);

    const events = await fixture.db.selectFrom('events').selectAll().execute();
    for (const row of events) {
      // What a delivery sends (webhook-delivery.ts): the event as the audit log renders it.
      const body = JSON.parse(JSON.stringify(toEventResponse(row)));
      const validate = ajv.compile(webhookPayloadSchema(row.type as EventType));
      assert.ok(validate(body), `${row.type}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body.data)}`);
      checked.add(row.type as EventType);
    }
  });
});
