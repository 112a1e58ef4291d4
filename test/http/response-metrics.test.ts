import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { AggregatorRegistry, Counter, Histogram, Registry } from 'prom-client';
import { ResponseMetrics } from '../../src/http/response-metrics.js';

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
// Two routes of one pattern (a GET and its HEAD share a pattern, and so may two configs) make one series.
const ROUTES = [{ config: {}, url: '/api/variants/:id' }, { config: {}, url: '/api/users' }, { config: {}, url: undefined }, { config: {}, url: '/api/users' }];

interface Observation {
  route: number;
  method: string;
  status: number;
  seconds: number;
}

/** The same observations in ResponseMetrics and in prom-client's own Counter and Histogram. */
function bothRegistries(observations: Observation[]) {
  const ours = new Registry();
  const metrics = new ResponseMetrics();
  metrics.register(ours);
  const theirs = new Registry();
  const labelNames = ['method', 'route', 'status'] as const;
  const counter = new Counter({ name: 'http_requests_total', help: 'Requests answered, by method, route and status.', labelNames, registers: [theirs] });
  const histogram = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from the request to the end of the reply, by method, route and status.',
    labelNames,
    buckets: BUCKETS,
    registers: [theirs],
  });
  for (const observation of observations) {
    const route = ROUTES[observation.route]!;
    metrics.record(route, observation.method, observation.status, observation.seconds);
    const labels = [observation.method, route.url ?? 'unmatched', String(observation.status)] as const;
    counter.labels(...labels).inc();
    histogram.labels(...labels).observe(observation.seconds);
  }
  return { ours, theirs, metrics };
}

const observation = fc.record({
  route: fc.integer({ min: 0, max: ROUTES.length - 1 }),
  method: fc.constantFrom('GET', 'PUT', 'POST'),
  status: fc.constantFrom(200, 201, 404, 429),
  // Bucket bounds themselves fall in their bucket: they are drawn as often as values between them.
  seconds: fc.oneof(fc.constantFrom(0, ...BUCKETS), fc.double({ min: 0, max: 20, noNaN: true })),
});

describe('response metrics', () => {
  it('render the text prom-client renders for the same requests', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(observation, { maxLength: 60 }), async (observations) => {
        const { ours, theirs } = bothRegistries(observations);
        assert.equal(await ours.metrics(), await theirs.metrics());
      }),
      { numRuns: 100 },
    );
  });

  it('add up over workers as prom-client adds its own up', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(observation, { maxLength: 30 }), fc.array(observation, { maxLength: 30 }), async (first, second) => {
        const workers = [bothRegistries(first), bothRegistries(second)];
        const ourSum = AggregatorRegistry.aggregate(await Promise.all(workers.map(({ ours }) => ours.getMetricsAsJSON())));
        const theirSum = AggregatorRegistry.aggregate(await Promise.all(workers.map(({ theirs }) => theirs.getMetricsAsJSON())));
        assert.equal(await ourSum.metrics(), await theirSum.metrics());
      }),
      { numRuns: 50 },
    );
  });

  it('go back to zero with the registry', async () => {
    const { ours, theirs, metrics } = bothRegistries([{ route: 0, method: 'GET', status: 200, seconds: 0.003 }]);
    metrics.reset();
    theirs.resetMetrics();
    // prom-client forgets a series on reset; ours keeps it at zero, as a Prometheus counter may.
    assert.doesNotMatch(await theirs.metrics(), /^http_requests_total\{/m);
    assert.match(await ours.metrics(), /^http_requests_total\{method="GET",route="\/api\/variants\/:id",status="200"\} 0$/m);
    assert.match(await ours.metrics(), /^http_request_duration_seconds_bucket\{le="\+Inf",method="GET",route="\/api\/variants\/:id",status="200"\} 0$/m);
    assert.match(await ours.metrics(), /^http_request_duration_seconds_count\{method="GET",route="\/api\/variants\/:id",status="200"\} 0$/m);
  });
});
