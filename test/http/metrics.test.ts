import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { eventually } from '../helpers/eventually.js';
import { createScratchDatabase } from '../helpers/scratch-database.js';
import { freePort, startService } from '../helpers/service-process.js';
import { buildTestApp, onPostgres, useAppWithAdmin } from '../helpers/test-app.js';

/** The value of one sample of the Prometheus text, labels given in the order they are printed. */
function sample(text: string, name: string, labels = ''): number | undefined {
  const prefix = labels ? `${name}{${labels}} ` : `${name} `;
  const line = text.split('\n').find((candidate) => candidate.startsWith(prefix));
  return line === undefined ? undefined : Number(line.slice(prefix.length));
}

describe('GET /metrics', () => {
  const fixture = useAppWithAdmin();
  // The figures as they are now: GET /metrics renders at most once a second (tested below).
  const scrape = () => fixture.testApp.metricsRegistry.metrics();

  it('serves the Prometheus text format with every family the contract names, without a token by default', async () => {
    const response = await fixture.app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    for (const family of [
      'http_requests_total',
      'http_request_duration_seconds',
      'database_pool_connections',
      'email_queue_count',
      'email_queue_oldest_age_seconds',
      'webhook_queue_count',
      'webhook_queue_oldest_age_seconds',
      'reservations_overdue_count',
      'reservations_overdue_oldest_age_seconds',
      'reservations_expired_total',
      'stock_adjustments_total',
      'rate_limit_refusals_total',
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
    ]) {
      assert.match(response.body, new RegExp(`^# TYPE ${family} `, 'm'), family);
    }
    assert.equal(sample(response.body, 'database_pool_connections', 'state="total"')! >= 1, true);
  });

  it('counts requests by method, route pattern and status, and times them', async () => {
    const before = await scrape();
    const id = randomUUID();
    for (let index = 0; index < 3; index++) await fixture.app.inject({ method: 'GET', url: `/api/variants/${id}`, headers: fixture.admin.auth });
    const after = await scrape();
    const labels = 'method="GET",route="/api/variants/:id",status="404"';
    assert.equal((sample(after, 'http_requests_total', labels) ?? 0) - (sample(before, 'http_requests_total', labels) ?? 0), 3);
    assert.equal((sample(after, 'http_request_duration_seconds_count', labels) ?? 0) - (sample(before, 'http_request_duration_seconds_count', labels) ?? 0), 3);
    assert.ok(!after.includes(id), 'ids never become labels');
  });

  it('reads the queues from the database: emails waiting, reservations expired, stock adjustments made', async () => {
    const emailsBefore = sample(await scrape(), 'email_queue_count')!;
    await fixture.app.inject({ method: 'POST', url: '/api/auth/password-reset', payload: { email: 'root-admin@example.com' } });
    // The link is queued after the reply has gone.
    await eventually(async () => ((sample(await scrape(), 'email_queue_count') ?? 0) > emailsBefore ? true : undefined), 'the queued email');
    assert.equal(sample(await scrape(), 'email_queue_count'), emailsBefore + 1, 'without SMTP_URL the email waits in the outbox');
    // The oldest waits as long as the database says: moved a minute into the past, it is a minute old.
    await sql`update email_outbox set next_attempt_at = now() - interval '60 seconds' where status = 'pending'`.execute(fixture.db);
    const oldest = sample(await scrape(), 'email_queue_oldest_age_seconds')!;
    assert.ok(oldest >= 60 && oldest < 120, `oldest ${oldest} s`);

    const variant = (await fixture.app.inject({ method: 'POST', url: '/api/variants', headers: fixture.admin.auth, payload: { product_id: 'metrics', sku: `M-${randomUUID()}`, name: 'M', price: 1, stock: 5 } })).json();
    await fixture.app.inject({ method: 'PUT', url: `/api/variants/${variant.id}/stock`, headers: fixture.admin.auth, payload: { delta: 1, reason: 'count' } });
    assert.equal(sample(await scrape(), 'stock_adjustments_total', 'kind="single"'), 1);
    const expiredBefore = sample(await scrape(), 'reservations_expired_total')!;
    const reservation = (await fixture.app.inject({ method: 'POST', url: '/api/reservations', headers: fixture.admin.auth, payload: { lines: [{ variant_id: variant.id, quantity: 1 }] } })).json();
    await sql`update reservations set expires_at = now() - interval '1 second' where id = ${reservation.id}`.execute(fixture.db);
    await fixture.jobs.runNow('expire-reservations');
    assert.equal(sample(await scrape(), 'reservations_expired_total'), expiredBefore + 1);
    assert.equal(sample(await scrape(), 'reservations_overdue_count'), 0);
  });

  it('answers only loopback clients without METRICS_TOKEN (404 to others), and renders at most once a second, shared', async () => {
    let renderings = 0;
    fixture.app.metrics.gauge({ name: 'test_renderings', help: 'How often the text was rendered.', collect: () => void renderings++ });
    const remote = await fixture.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '203.0.113.9' });
    assert.equal(remote.statusCode, 404);
    assert.equal(remote.json().code, 'not_found');
    const forwarded = await fixture.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '203.0.113.9', headers: { 'x-forwarded-for': '127.0.0.1' } });
    assert.equal(forwarded.statusCode, 404, 'X-Forwarded-For does not make a client local');
    const before = renderings;
    const scrapes = await Promise.all(Array.from({ length: 6 }, () => fixture.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '::1' })));
    scrapes.push(await fixture.app.inject({ method: 'GET', url: '/metrics' }));
    assert.ok(scrapes.every((scrape) => scrape.statusCode === 200));
    assert.equal(new Set(scrapes.map((scrape) => scrape.body)).size, 1, 'every scrape of the second got the same text');
    assert.ok(renderings - before <= 1, `rendered ${renderings - before} times for 7 scrapes in one second`);
  });

  it('judges loopback by the client address resolved after TRUST_PROXY: a request forwarded for another address is refused', async () => {
    const proxied = await buildTestApp({ environment: { TRUST_PROXY: '127.0.0.1' } });
    try {
      const forPublic = await proxied.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': '203.0.113.9' } });
      assert.equal(forPublic.statusCode, 404, 'the proxy on this machine forwarded a client of the internet');
      assert.equal(forPublic.json().code, 'not_found');
      const forIpv6 = await proxied.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': '2001:db8::1' } });
      assert.equal(forIpv6.statusCode, 404);
      const forLoopback = await proxied.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': '127.0.0.1' } });
      assert.equal(forLoopback.statusCode, 200, 'forwarded for a client on this machine');
      const direct = await proxied.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '127.0.0.1' });
      assert.equal(direct.statusCode, 200, 'no X-Forwarded-For: the peer itself is the client');
      const untrusted = await proxied.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '203.0.113.9', headers: { 'x-forwarded-for': '127.0.0.1' } });
      assert.equal(untrusted.statusCode, 404, 'an untrusted peer cannot claim to forward for loopback');
    } finally {
      await proxied.close();
    }
    // Trusting every proxy: a client that writes 127.0.0.1 first, and a proxy that appends its real address, is not local.
    const trustingAll = await buildTestApp({ environment: { TRUST_PROXY: 'true' } });
    try {
      const spoofed = await trustingAll.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': '127.0.0.1, 203.0.113.9' } });
      assert.equal(spoofed.statusCode, 404, 'a spoofed leftmost loopback entry');
      const local = await trustingAll.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': '127.0.0.1' } });
      assert.equal(local.statusCode, 200);
    } finally {
      await trustingAll.close();
    }
    // Without TRUST_PROXY the header is ignored, as before: the TCP peer decides.
    const ignored = await fixture.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': '203.0.113.9' } });
    assert.equal(ignored.statusCode, 200);
  });

  it('needs the token when METRICS_TOKEN is set, and counts rate-limit refusals', async () => {
    const token = 'metrics-token-0123456789';
    const guarded = await buildTestApp({ environment: { METRICS_TOKEN: token, API_RATE_LIMIT: '2' } });
    try {
      const without = await guarded.app.inject({ method: 'GET', url: '/metrics' });
      assert.equal(without.statusCode, 401);
      assert.equal(without.json().code, 'unauthenticated');
      assert.equal(without.headers['www-authenticate'], 'Bearer');
      assert.equal((await guarded.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer metrics-token-wrong-value' } })).statusCode, 401);
      for (let index = 0; index < 4; index++) await guarded.app.inject({ method: 'GET', url: '/api/users/profile' });
      const scraped = await guarded.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}` } });
      assert.equal(scraped.statusCode, 200);
      assert.equal(sample(scraped.body, 'rate_limit_refusals_total'), 2, 'two anonymous requests over the budget of 2');
    } finally {
      await guarded.close();
    }
  });
});

/** A GET on a connection of its own, so node:cluster hands each to the next worker. */
function getOnNewConnection(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { agent: false }, (response) => {
      let body = '';
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', reject);
  });
}

describe('GET /metrics with WORKERS=2 (PostgreSQL)', { skip: !onPostgres && 'WORKERS above 1 needs PostgreSQL' }, () => {
  it('covers every worker in one scrape, whichever worker answers it', { timeout: 60_000 }, async () => {
    const scratch = await createScratchDatabase(process.env.DATABASE_URL!, 'metrics');
    const service = await startService({ DATABASE_URL: scratch.url, PORT: await freePort(), WORKERS: '2', JWT_SECRET: randomUUID() + randomUUID() });
    try {
      const labels = 'method="GET",route="/healthz",status="200"';
      const first = sample((await getOnNewConnection(`${service.baseUrl}/metrics`)).body, 'http_requests_total', labels) ?? 0;
      for (let index = 0; index < 40; index++) assert.equal((await getOnNewConnection(`${service.baseUrl}/healthz`)).status, 200);
      // Each worker renders at most once a second: a scrape may show the last rendering, never a part of the workers.
      for (let scrape = 0; scrape < 4; scrape++) {
        let seen: number | undefined;
        for (const deadline = Date.now() + 10_000; seen !== first + 40 && Date.now() < deadline; ) {
          seen = sample((await getOnNewConnection(`${service.baseUrl}/metrics`)).body, 'http_requests_total', labels);
          assert.ok(seen === first || seen === first + 40, `scrape ${scrape} shows ${seen}: both workers or the rendering before`);
        }
        assert.equal(seen, first + 40, `scrape ${scrape} sums both workers`);
      }
    } finally {
      service.child.kill('SIGTERM');
      await service.exited;
      await scratch.drop();
    }
  });
});
