import type { Metric, Registry } from 'prom-client';

/** Upper bounds of the duration buckets, in seconds. */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

interface Series {
  labels: { method: string; route: string; status: string };
  count: number;
  sum: number;
  /** Observations per bucket (not cumulative); the last counts those above every bound. */
  inBucket: number[];
}

/** A sample as prom-client's registry renders it and its cluster aggregator adds it up. */
interface Sample {
  metricName?: string;
  labels: Record<string, string | number>;
  value: number;
}

/**
 * `http_requests_total` and `http_request_duration_seconds`, by method, route pattern and status:
 * plain numbers a request adds to, turned into prom-client's samples only when scraped. A
 * prom-client Counter and Histogram validate and hash their labels on every call, even bound to
 * them: the two calls cost a by-id read a twelfth of its instructions (bench/README.md). The
 * text is the one prom-client's own Histogram renders for the same observations
 * (test/http/response-metrics.test.ts), and with WORKERS above 1 the aggregator adds the
 * workers' samples up as it does for its own metrics.
 */
export class ResponseMetrics {
  /** By the route's own config object (never the raw URL: ids would make a series each), then method and status. */
  readonly #byRoute = new WeakMap<object, Map<string, Map<number, Series>>>();
  /** Every series by its labels: two routes' config objects with one pattern share a series, as prom-client's labels would. */
  readonly #byLabels = new Map<string, Series>();

  record(route: { config: object; url: string | undefined }, method: string, status: number, seconds: number): void {
    let byMethod = this.#byRoute.get(route.config);
    if (!byMethod) this.#byRoute.set(route.config, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map()));
    let series = byStatus.get(status);
    if (!series) {
      const labels = { method, route: route.url ?? 'unmatched', status: String(status) };
      const key = JSON.stringify(labels);
      series = this.#byLabels.get(key);
      if (!series) this.#byLabels.set(key, (series = { labels, count: 0, sum: 0, inBucket: new Array<number>(BUCKETS.length + 1).fill(0) }));
      byStatus.set(status, series);
    }
    series.count += 1;
    series.sum += seconds;
    let bucket = 0;
    while (bucket < BUCKETS.length && seconds > BUCKETS[bucket]!) bucket += 1;
    series.inBucket[bucket]! += 1;
  }

  /** Registers both families with `registry`. */
  register(registry: Registry): void {
    const reset = () => this.reset();
    registry.registerMetric(
      family('http_requests_total', 'Requests answered, by method, route and status.', 'counter', reset, () =>
        [...this.#byLabels.values()].map((series) => ({ labels: series.labels, value: series.count })),
      ),
    );
    registry.registerMetric(
      family('http_request_duration_seconds', 'Time from the request to the end of the reply, by method, route and status.', 'histogram', reset, () =>
        [...this.#byLabels.values()].flatMap((series) => histogramSamples('http_request_duration_seconds', series)),
      ),
    );
  }

  /** Back to zero, as prom-client's own metrics do on `registry.resetMetrics()`. */
  reset(): void {
    for (const series of this.#byLabels.values()) {
      series.count = 0;
      series.sum = 0;
      series.inBucket.fill(0);
    }
  }
}

function histogramSamples(name: string, series: Series): Sample[] {
  const samples: Sample[] = [];
  let cumulative = 0;
  BUCKETS.forEach((bound, index) => {
    cumulative += series.inBucket[index]!;
    samples.push({ metricName: `${name}_bucket`, labels: { le: bound, ...series.labels }, value: cumulative });
  });
  samples.push(
    { metricName: `${name}_bucket`, labels: { le: '+Inf', ...series.labels }, value: series.count },
    { metricName: `${name}_sum`, labels: series.labels, value: series.sum },
    { metricName: `${name}_count`, labels: series.labels, value: series.count },
  );
  return samples;
}

/**
 * A metric family in the shape prom-client's Registry reads from its own metrics (`get()`), as
 * its AggregatorRegistry registers the families it sums. prom-client's type names only its own
 * classes, hence the cast.
 */
function family(name: string, help: string, type: 'counter' | 'histogram', reset: () => void, samples: () => Sample[]): Metric {
  const read = () => ({ name, help, type, aggregator: 'sum' as const, values: samples() });
  return { name, help, type, aggregator: 'sum', get: async () => read(), reset } as unknown as Metric;
}
