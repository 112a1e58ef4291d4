import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTracing, type Tracing } from '../../src/tracing.js';
import { eventually } from '../helpers/eventually.js';
import { attribute, OtlpReceiver } from '../helpers/otlp-receiver.js';
import { buildTestApp, loginAdmin, newVariantBody, type Session, type TestApp } from '../helpers/test-app.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

/** API.md section 15: traces over OTLP when the OTEL_* variables ask for them. */
describe('tracing', () => {
  const collector = new OtlpReceiver();
  const webhooks = new WebhookReceiver();
  const logLines: string[] = [];
  let tracing: Tracing;
  let testApp: TestApp;
  let admin: Session;

  before(async () => {
    const endpoint = await collector.start();
    Object.assign(process.env, { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_TRACES_SAMPLER: 'always_on', OTEL_BSP_SCHEDULE_DELAY: '100' });
    tracing = (await startTracing(process.env))!;
    testApp = await buildTestApp({ tracing, logLines, environment: { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
    admin = await loginAdmin(testApp.app);
  });
  after(async () => {
    await testApp.close();
    await tracing.shutdown();
    await collector.stop();
    await webhooks.stop();
  });

  it('continues an incoming traceparent with a server span named by route pattern, its statements as child spans, and trace ids in the log', async () => {
    const { app } = testApp;
    const variant = (await app.inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: newVariantBody(3) })).json();
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpanId = '00f067aa0ba902b7';
    const reply = await app.inject({ method: 'GET', url: `/api/variants/${variant.id}`, headers: { ...admin.auth, traceparent: `00-${traceId}-${callerSpanId}-01` } });
    assert.equal(reply.statusCode, 200);
    await tracing.flush();
    const server = await eventually(() => collector.spans.find((span) => span.traceId === traceId && span.name === 'GET /api/variants/{id}'), 'the server span');
    assert.equal(server.kind, 2, 'SERVER');
    assert.equal(server.parentSpanId, callerSpanId, "the caller's span is its parent");
    assert.equal(attribute(server, 'http.request.method'), 'GET');
    assert.equal(attribute(server, 'http.response.status_code'), 200);
    const statements = collector.spans.filter((span) => span.traceId === traceId && span.parentSpanId === server.spanId && span.kind === 3);
    assert.ok(statements.some((span) => span.name === 'SELECT' && String(attribute(span, 'db.query.text')).includes('from "variants"')), 'the read is a child span');
    assert.ok(collector.resources.some((resource) => JSON.stringify(resource).includes('"shop-accounts"')), 'service.name defaults to shop-accounts');
    const accessLine = logLines.map((line) => JSON.parse(line)).find((line) => line.trace_id === traceId);
    assert.ok(accessLine, 'a log line of the request carries its trace_id');
    assert.equal(accessLine.span_id, server.spanId);
  });

  it('writes no secret of a query string into span attributes: the query is redacted as in the log (API.md section 17)', async () => {
    const { app } = testApp;
    const traceId = '6e0c63257de34c926f9efcd03919bb94';
    const reply = await app.inject({
      method: 'GET',
      url: '/api/variants?limit=5&client_secret=cs-8f1d2c7a&access_token=at-4b9e0f3d',
      headers: { ...admin.auth, traceparent: `00-${traceId}-a3ce929d0e0e4736-01` },
    });
    assert.ok(reply.statusCode < 500);
    await tracing.flush();
    const server = await eventually(() => collector.spans.find((span) => span.traceId === traceId && span.name === 'GET /api/variants'), 'the server span');
    for (const span of collector.spans.filter((candidate) => candidate.traceId === traceId)) {
      const attributes = JSON.stringify(span.attributes);
      assert.ok(!attributes.includes('cs-8f1d2c7a') && !attributes.includes('at-4b9e0f3d'), `span ${span.name} holds no secret: ${attributes}`);
    }
    assert.equal(attribute(server, 'url.path'), '/api/variants');
    assert.equal(attribute(server, 'url.query'), 'limit=5&client_secret=[redacted]&access_token=[redacted]', 'the query as the log writes it');
  });

  it('walks every route: no span of any request holds a secret its query string carried (API.md section 17)', async () => {
    const { app } = testApp;
    const secrets = ['cs-walk-1d2c', 'at-walk-9e0f', 'pw-walk-77aa', 'code-walk-5b5b'];
    const query = `client_secret=${secrets[0]}&access_token=${secrets[1]}&password=${secrets[2]}&code=${secrets[3]}`;
    const routes = app.routeTable.filter((route) => route.method !== 'HEAD' && !route.url.includes('*'));
    assert.ok(routes.length >= 50, `${routes.length} routes`);
    const traces: string[] = [];
    for (const [index, route] of routes.entries()) {
      const traceId = `7${index.toString(16).padStart(31, '0')}`;
      traces.push(traceId);
      const url = `${route.url.replace(/:([a-z_]+)/g, '00000000-0000-4000-8000-000000000000')}?${query}`;
      const reply = await app.inject({ method: route.method as 'GET', url, headers: { ...admin.auth, traceparent: `00-${traceId}-a3ce929d0e0e4736-01` } });
      assert.ok(reply.statusCode < 500, `${route.method} ${route.url}: ${reply.statusCode} ${reply.body}`);
    }
    await tracing.flush();
    await eventually(() => collector.spans.some((span) => span.traceId === traces.at(-1)) || undefined, 'the last route\'s spans');
    const walked = collector.spans.filter((span) => traces.includes(span.traceId));
    assert.ok(walked.length >= routes.length, `${walked.length} spans of ${routes.length} requests`);
    for (const span of walked) {
      const attributes = JSON.stringify(span.attributes ?? []);
      for (const secret of secrets) assert.ok(!attributes.includes(secret), `span ${span.name} holds ${secret}: ${attributes}`);
    }
  });

  it("sends traceparent with a webhook delivery: the delivery's span, linked to the trace of the request that recorded the event", async () => {
    const { app, jobs } = testApp;
    const url = await webhooks.start();
    assert.equal((await app.inject({ method: 'POST', url: '/api/webhooks', headers: admin.auth, payload: { url, events: ['variant.created'] } })).statusCode, 201);
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const created = await app.inject({ method: 'POST', url: '/api/variants', headers: { ...admin.auth, traceparent: `00-${traceId}-b7ad6b7169203331-01` }, payload: newVariantBody(1) });
    assert.equal(created.statusCode, 201);
    await jobs.runNow('deliver-webhooks');
    const delivery = await eventually(() => webhooks.received.find((item) => item.body.includes(created.json().id)), 'the delivery');
    const traceparent = String(delivery.headers.traceparent);
    assert.match(traceparent, /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const [, deliveryTrace, deliverySpan] = traceparent.split('-');
    await tracing.flush();
    const post = await eventually(() => collector.spans.find((span) => span.name === 'webhook POST' && span.spanId === deliverySpan), 'the delivery span');
    assert.equal(post.traceId, deliveryTrace);
    assert.equal(post.kind, 3, 'CLIENT');
    const request = collector.spans.find((span) => span.traceId === traceId && span.name === 'POST /api/variants');
    assert.ok(request, 'the request that recorded the event');
    assert.deepEqual(post.links?.map((link) => [link.traceId, link.spanId]), [[traceId, request.spanId]], "linked to the request's span");
    const attempt = collector.spans.find((span) => span.spanId === post.parentSpanId);
    assert.equal(attempt?.name, 'deliver-webhooks attempt', "each attempt of a queue is a trace of its own, the send's parent");
    assert.equal(attempt?.parentSpanId ?? '', '', 'a root: not part of the trace of whoever woke the queue');
    assert.ok(collector.spans.some((span) => span.name === 'job deliver-webhooks'), 'a job run is a span');
  });
});
