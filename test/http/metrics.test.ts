import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
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
  const scrape = async () => {
    const response = await fixture.app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(response.statusCode, 200);
    return response.body;
  };

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
    assert.equal(sample(await scrape(), 'email_queue_count'), emailsBefore + 1, 'without SMTP_URL the email waits in the outbox');
    assert.ok(sample(await scrape(), 'email_queue_oldest_age_seconds')! >= 0);

    const variant = (await fixture.app.inject({ method: 'POST', url: '/api/variants', headers: fixture.admin.auth, payload: { product_id: 'metrics', sku: `M-${randomUUID()}`, name: 'M', price: 1, stock: 5 } })).json();
    await fixture.app.inject({ method: 'PUT', url: `/api/variants/${variant.id}/stock`, headers: fixture.admin.auth, payload: { delta: 1, reason: 'count' } });
    assert.equal(sample(await scrape(), 'stock_adjustments_total', 'kind="single"'), 1);
    const expiredBefore = sample(await scrape(), 'reservations_expired_total')!;
    const reservation = (await fixture.app.inject({ method: 'POST', url: '/api/reservations', headers: fixture.admin.auth, payload: { lines: [{ variant_id: variant.id, quantity: 1 }] } })).json();
    await sql`update reservations set expires_at = now() - interval '1 second' where id = ${reservation.id}`.execute(fixture.app.db);
    await fixture.app.jobs.runNow('expire-reservations');
    assert.equal(sample(await scrape(), 'reservations_expired_total'), expiredBefore + 1);
    assert.equal(sample(await scrape(), 'reservations_overdue_count'), 0);
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
      for (let scrape = 0; scrape < 4; scrape++) {
        const text = (await getOnNewConnection(`${service.baseUrl}/metrics`)).body;
        assert.equal(sample(text, 'http_requests_total', labels), first + 40, `scrape ${scrape} sums both workers`);
      }
    } finally {
      service.child.kill('SIGTERM');
      await service.exited;
      await scratch.drop();
    }
  });
});
