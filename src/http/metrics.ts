import cluster from 'node:cluster';
import { randomUUID, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { DatabaseHandle } from '../db/database.js';
import { transactionRetries } from '../db/transaction.js';
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Registry, type GaugeConfiguration } from 'prom-client';
import { AppError, notFound } from './errors.js';
import { problemResponses } from './problem-schema.js';
import { ResponseMetrics } from './response-metrics.js';

const SCRAPE = 'metrics:scrape';
const SCRAPED = 'metrics:scraped';
const SCRAPE_TIMEOUT_MS = 5000;
const RENDER_EVERY_MS = 1000;

/**
 * What the app decorates: ways to add figures, never to read them. Reading the registry runs the
 * queue gauges' statements, so it stays with this plugin (GET /metrics) and whoever built the app.
 */
export interface Metrics {
  /**
   * A gauge read at scrape time. `aggregator: 'first'` for figures every worker reads from the
   * shared database (a queue's length), so a scrape over several workers does not add them up.
   */
  gauge<Label extends string>(configuration: Omit<GaugeConfiguration<Label>, 'registers'>): Gauge<Label>;
  counter<Label extends string>(configuration: { name: string; help: string; labelNames?: Label[] }): Counter<Label>;
  /**
   * A queue kept in the shared database: `<name>_count` and `<name>_oldest_age_seconds`, read by
   * one query per scrape and not added up over workers.
   */
  queue(name: string, what: string, read: () => Promise<{ count: number; oldestAgeSeconds: number }>): void;
}

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics;
  }
}

/**
 * In the primary of WORKERS > 1: answers a worker's request for the metrics of all workers
 * with prom-client's cluster aggregator, so whichever worker the scrape reaches covers all.
 */
export function serveClusterMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: { type?: string; id?: string }) => {
    if (message?.type !== SCRAPE) return;
    aggregator
      .clusterMetrics()
      .then((text) => worker.send({ type: SCRAPED, id: message.id, text }))
      .catch((error: Error) => worker.send({ type: SCRAPED, id: message.id, error: error.message }));
  });
}

function scrapeAllWorkers(): Promise<string> {
  const id = randomUUID();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error('the primary did not answer the scrape')), SCRAPE_TIMEOUT_MS);
    const listener = (message: { type?: string; id?: string; text?: string; error?: string }) => {
      if (message?.type === SCRAPED && message.id === id) finish(message.error ? new Error(message.error) : undefined, message.text);
    };
    const finish = (error?: Error, text?: string) => {
      clearTimeout(timer);
      process.off('message', listener);
      if (error) reject(error);
      else resolve(text ?? '');
    };
    process.on('message', listener);
    process.send!({ type: SCRAPE, id });
  });
}

/**
 * Whether the client the service resolves (after TRUST_PROXY) is on this machine: the TCP peer
 * and every address the trusted proxies name on the way to it (`request.ips`, which ends at the
 * resolved client) must be loopback. A proxy on this machine does not make its clients local;
 * with TRUST_PROXY=true the leftmost X-Forwarded-For entry, which the client itself writes, is
 * not enough, since a proxy that appends forwards `127.0.0.1, <the real address>`.
 */
function fromThisMachine(request: { ip: string; ips?: string[] }): boolean {
  return [request.ip, ...(request.ips ?? [])].every(isLoopback);
}

function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const bare = address.replace(/^::ffff:/i, '');
  return bare === '::1' || /^127\./.test(bare);
}

/**
 * The metrics text, rendered at most once a second and shared by every scrape within that
 * second (and by scrapes that arrive while a rendering runs): a render costs tens of
 * milliseconds, and many scrapers must not take that from requests.
 */
class SharedRendering {
  private latest: { text: Promise<string>; at: number } | undefined;

  constructor(private readonly render: () => Promise<string>) {}

  get(): Promise<string> {
    const now = Date.now();
    if (!this.latest || now - this.latest.at >= RENDER_EVERY_MS) {
      const text = this.render();
      this.latest = { text, at: now };
      // A failed rendering is not kept: the next scrape tries again.
      text.catch(() => {
        if (this.latest?.text === text) this.latest = undefined;
      });
    }
    return this.latest.text;
  }
}

function sameToken(sent: string | undefined, expected: string): boolean {
  const match = /^Bearer +(.+)$/i.exec(sent ?? '');
  const given = Buffer.from(match?.[1]?.trim() ?? '');
  const wanted = Buffer.from(expected);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

/**
 * Prometheus metrics: requests by route and status, pool use, process figures, and whatever
 * gauges and counters the services and areas register (`app.metrics.gauge`). Served at
 * GET /metrics; with METRICS_TOKEN, only to `Authorization: Bearer <METRICS_TOKEN>`.
 */
export const metricsPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { token: string | undefined; database: DatabaseHandle; registry: Registry }) => {
    const { registry } = options;
    const inCluster = cluster.isWorker;
    if (inCluster) {
      // Makes this worker answer the primary's aggregator with this registry.
      AggregatorRegistry.setRegistries([registry]);
      new AggregatorRegistry();
    }
    collectDefaultMetrics({ register: registry });
    const metrics: Metrics = {
      gauge: (configuration) => new Gauge({ ...configuration, registers: [registry] }),
      counter: (configuration) => new Counter({ ...configuration, registers: [registry] }),
      queue(name, what, read) {
        // Both gauges are collected in one scrape, the count first: one query serves the two.
        let reading: ReturnType<typeof read> | undefined;
        metrics.gauge({
          name: `${name}_count`,
          help: `${what}: how many.`,
          aggregator: 'first',
          async collect() {
            reading = read();
            this.set((await reading).count);
          },
        });
        metrics.gauge({
          name: `${name}_oldest_age_seconds`,
          help: `${what}: age of the oldest, in seconds (0 when there is none).`,
          aggregator: 'first',
          async collect() {
            const stats = await (reading ?? read());
            reading = undefined;
            this.set(stats.oldestAgeSeconds);
          },
        });
      },
    };
    app.decorate('metrics', metrics);

    const rendering = new SharedRendering(() => (inCluster ? scrapeAllWorkers() : registry.metrics()));
    const responses = new ResponseMetrics();
    responses.register(registry);
    const refusals = metrics.counter({ name: 'rate_limit_refusals_total', help: 'Requests refused with 429 by the rate limiter.' });
    app.addHook('onResponse', (request, reply, done) => {
      responses.record(request.routeOptions, request.method, reply.statusCode, reply.elapsedTime / 1000);
      if (reply.statusCode === 429) refusals.inc();
      done();
    });
    const reportedRetries = { ...transactionRetries };
    new Counter({
      name: 'database_transaction_retries_total',
      help: 'Transactions retried after a serialization failure or a deadlock, by reason.',
      labelNames: ['reason'],
      registers: [registry],
      collect() {
        for (const reason of Object.keys(transactionRetries) as (keyof typeof transactionRetries)[]) {
          this.inc({ reason }, transactionRetries[reason] - reportedRetries[reason]);
          reportedRetries[reason] = transactionRetries[reason];
        }
      },
    });
    metrics.gauge({
      name: 'database_pool_connections',
      help: 'Connections of the database pool, by state (total, idle), and queries waiting for one.',
      labelNames: ['state'],
      collect() {
        const stats = options.database.poolStats();
        this.set({ state: 'total' }, stats.total);
        this.set({ state: 'idle' }, stats.idle);
        this.set({ state: 'waiting' }, stats.waiting);
      },
    });

    app.get(
      '/metrics',
      {
        config: { unlimited: true },
        schema: {
          operationId: 'metrics',
          tags: ['operations'],
          summary: 'Prometheus metrics',
          description:
            'Prometheus text format: requests and durations by route and status, database pool and transaction retries, email and webhook queues ' +
            '(count and age of the oldest), reservations past their deadline, the reconciliation of `reserved`, rate-limit refusals, process figures. ' +
            'Needs `Authorization: Bearer <METRICS_TOKEN>` when METRICS_TOKEN is set; without it, only clients on the ' +
            "service's own machine (loopback, judged by the client address resolved after TRUST_PROXY) are answered, others get 404. The text is rendered at most once a second and " +
            'shared by the scrapes of that second. With WORKERS above 1 it covers all workers.',
          response: {
            200: { description: 'The metrics.', content: { 'text/plain; version=0.0.4; charset=utf-8': { schema: { type: 'string' } } } },
            ...problemResponses(401, 404),
          },
        },
      },
      async (request, reply) => {
        if (options.token && !sameToken(request.headers.authorization, options.token)) {
          throw new AppError('unauthenticated', 'Send the metrics token as Authorization: Bearer <METRICS_TOKEN>.', undefined, { 'www-authenticate': 'Bearer' });
        }
        // Without a token the figures are for the machine's own scraper: nobody else learns they exist.
        if (!options.token && !fromThisMachine(request)) throw notFound('route');
        return reply.type(registry.contentType).send(await rendering.get());
      },
    );
  },
  { name: 'metrics', dependencies: ['database'] },
);
